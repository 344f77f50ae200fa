"""Test helpers that ship with wisp, so users can test their agents offline.

    from wisp.testing import ScriptedServer, reply

    with ScriptedServer(reply.tool_use("Bash", {"command": "ls"}), reply.text("done")) as api:
        ...  # point the agent at api.url, then inspect api.requests

The same server speaks Chat Completions at `api.openai_url` (same replies, one queue);
`reply.openai_raw(frames, ...)` scripts the byte-level quirks of OpenAI-compatible servers.

In process, with no server: `ScriptedModel(*replies)` and `FunctionModel(fn)` are
`wisp.models.base.Model`s that answer with the same `reply.*` scripts, and
`ControlChannel` connects two control dispatchers through in-memory queues.

Names load on first use: `import wisp.testing` stays cheap, and `python -m
wisp.testing.server` does not find its own module already imported by this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wisp.testing import reply
    from wisp.testing.cassette import RecordingModel, ReplayMismatch, ReplayModel, load_cassette
    from wisp.testing.channel import ControlChannel
    from wisp.testing.model import FunctionModel, ScriptedModel
    from wisp.testing.reply import Reply
    from wisp.testing.server import RecordedRequest, ScriptedServer

__all__ = [
    "ControlChannel",
    "FunctionModel",
    "RecordedRequest",
    "RecordingModel",
    "ReplayMismatch",
    "ReplayModel",
    "Reply",
    "ScriptedModel",
    "ScriptedServer",
    "load_cassette",
    "reply",
]

_HOMES = {
    "ControlChannel": "wisp.testing.channel",
    "FunctionModel": "wisp.testing.model",
    "RecordedRequest": "wisp.testing.server",
    "ScriptedModel": "wisp.testing.model",
    "ScriptedServer": "wisp.testing.server",
    "Reply": "wisp.testing.reply",
    "RecordingModel": "wisp.testing.cassette",
    "ReplayMismatch": "wisp.testing.cassette",
    "ReplayModel": "wisp.testing.cassette",
    "load_cassette": "wisp.testing.cassette",
}


def __getattr__(name: str) -> Any:
    if name == "reply":
        return importlib.import_module("wisp.testing.reply")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'wisp.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
