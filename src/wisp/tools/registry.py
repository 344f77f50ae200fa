"""The built-in tool set, in the order tools are offered to the model."""

from __future__ import annotations

from wisp.tools.base import Tool
from wisp.tools.bash import Bash
from wisp.tools.edit import Edit
from wisp.tools.glob import Glob
from wisp.tools.grep import Grep
from wisp.tools.read import Read
from wisp.tools.todo_write import TodoWrite
from wisp.tools.web_fetch import WebFetch
from wisp.tools.write import Write

BUILTIN_TOOL_CLASSES: tuple[type[Tool], ...] = (
    Bash,
    Edit,
    Glob,
    Grep,
    Read,
    TodoWrite,
    WebFetch,
    Write,
)


def builtin_tools() -> dict[str, Tool]:
    """Fresh instances keyed by tool name."""
    return {cls.name: cls() for cls in BUILTIN_TOOL_CLASSES}
