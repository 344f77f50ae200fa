"""Test helpers that ship with wisp, so users can test their agents offline.

    from wisp.testing import ScriptedServer, reply

    with ScriptedServer(reply.tool_use("Bash", {"command": "ls"}), reply.text("done")) as api:
        ...  # point the agent at api.url, then inspect api.requests

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
    from wisp.testing.channel import ControlChannel
    from wisp.testing.model import FunctionModel, ScriptedModel
    from wisp.testing.reply import Reply
    from wisp.testing.server import RecordedRequest, ScriptedServer

__all__ = [
    "ControlChannel",
    "FunctionModel",
    "RecordedRequest",
    "Reply",
    "ScriptedModel",
    "ScriptedServer",
    "reply",
]

_HOMES = {
    "ControlChannel": "wisp.testing.channel",
    "FunctionModel": "wisp.testing.model",
    "RecordedRequest": "wisp.testing.server",
    "ScriptedModel": "wisp.testing.model",
    "ScriptedServer": "wisp.testing.server",
    "Reply": "wisp.testing.reply",
}


def __getattr__(name: str) -> Any:
    if name == "reply":
        return importlib.import_module("wisp.testing.reply")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'wisp.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
