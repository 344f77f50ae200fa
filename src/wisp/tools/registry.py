"""The built-in tools: one table of names, in the order tools are offered to the model.

Importing this module imports no tool. `system/init` lists the tool names before any tool
loads; a tool's module is imported when the tool is first built (`builtin_tools`), and its
heavier helpers (subprocess plumbing, difflib, ripgrep lookup…) when it first runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wisp.tools.base import Tool

# Tool name -> the module defining it, as a class of the same name.
_BUILTIN_MODULES: dict[str, str] = {
    "Bash": "wisp.tools.bash",
    "Edit": "wisp.tools.edit",
    "ExitPlanMode": "wisp.tools.exit_plan_mode",
    "Glob": "wisp.tools.glob",
    "Grep": "wisp.tools.grep",
    "Read": "wisp.tools.read",
    "TodoWrite": "wisp.tools.todo_write",
    "WebFetch": "wisp.tools.web_fetch",
    "Write": "wisp.tools.write",
}
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_BUILTIN_MODULES)
# Offered by the engine rather than built here: Task (subagents) and, with --json-schema,
# StructuredOutput.
ENGINE_TOOL_TASK = "Task"
ENGINE_TOOL_STRUCTURED = "StructuredOutput"


def tool_class(name: str) -> type[Tool]:
    """The class of built-in tool `name` (KeyError for any other name)."""
    from importlib import import_module

    cls: type[Tool] = getattr(import_module(_BUILTIN_MODULES[name]), name)
    return cls


def builtin_tool_classes() -> tuple[type[Tool], ...]:
    return tuple(tool_class(name) for name in BUILTIN_TOOL_NAMES)


def builtin_tools(names: Iterable[str] | None = None) -> dict[str, Tool]:
    """Fresh instances keyed by tool name, in offering order; with `names`, only those of
    them that are built-ins (the others' modules are not even imported)."""
    wanted = BUILTIN_TOOL_NAMES if names is None else frozenset(names)
    return {name: tool_class(name)() for name in BUILTIN_TOOL_NAMES if name in wanted}
