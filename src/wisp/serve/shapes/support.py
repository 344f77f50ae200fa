"""What this server does not do, refused rather than accepted and ignored: each check
raises `ShapeError` naming the field, which the API answers as a 400.

The request parsers (`agents`, `sessions`, `client_events`) accept every shape the
official SDK can send, so the documents stay the API's; these checks run after them, on
the normalised fields, and say which setting wisp would otherwise have stored and never
acted on (a web search it has no backend for).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import AGENT_TOOLSET
from wisp.serve.shapes.client_events import ClientEvent
from wisp.serve.shapes.common import ShapeError, child_path

_NOT_HERE: Final = "is not supported by this server"


def check_agent_fields(fields: Mapping[str, Any], path: str = "") -> None:
    """The fields of an agent (a create, the result of an update, or a session's
    overrides): refuses those wisp would store and never act on."""
    for i, tool in enumerate(fields.get("tools") or []):
        where = child_path(path, f"tools[{i}]")
        if tool.get("type") == AGENT_TOOLSET:
            _check_toolset(tool, where)
    identity = fields.get("execution_identity") or {}
    if identity.get("type") == "aws_role":
        raise ShapeError(child_path(path, "execution_identity"), f"aws_role {_NOT_HERE}")
    model = fields.get("model")
    if isinstance(model, dict):
        _check_model(model, child_path(path, "model"))


def _check_model(model: JSON, path: str) -> None:
    if model.get("speed") == "fast":
        raise ShapeError(child_path(path, "speed"), f'"fast" {_NOT_HERE}')
    if model.get("inference_geo") is not None:
        raise ShapeError(child_path(path, "inference_geo"), _NOT_HERE)


def _check_toolset(tool: JSON, path: str) -> None:
    """web_search has no backend here: an agent that asks for it by name is refused (the
    default configuration's web_search is left out of the model's tools, as docs/serve.md
    says). web_fetch's `url_sources` is not implemented."""
    for i, config in enumerate(tool.get("configs") or []):
        where = child_path(path, f"configs[{i}]")
        if config.get("name") == "web_search" and config.get("enabled"):
            raise ShapeError(where, "web_search needs a search backend, and this server "
                             'has none configured: disable it ("enabled": false)')
        if config.get("name") == "web_fetch" and config.get("url_sources") is not None:
            raise ShapeError(child_path(where, "url_sources"), _NOT_HERE)


def check_session_fields(fields: Mapping[str, Any]) -> None:
    """The fields of `POST /v1/sessions` beyond the agent's."""
    check_client_events(fields.get("initial_events") or [], "initial_events")


def check_client_events(events: Sequence[ClientEvent], path: str = "events") -> None:
    """Client events this server would log and never act on: none today (outcomes are
    graded: `wisp.serve.outcomes`)."""
    del events, path
