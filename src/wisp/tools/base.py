"""The tool contract. The engine sits above (permission check → hooks → `run`); below is the OS.

A tool declares what it touches (`kind`, `target_paths`) so the permission layer can judge a
call without knowing the tool, and reports its outcome as a `ToolResult`: the text the model
reads plus `data`, the structured `tool_use_result` that stream-json clients see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from wisp.tools.processes import ProcessRegistry

ToolKind = Literal["read", "edit", "execute", "network", "meta"]
JSON = dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced. `content` goes to the model; `data` to stream-json clients."""

    content: str | list[JSON]
    is_error: bool = False
    data: Any = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=message, is_error=True, data=f"Error: {message}")


@dataclass
class ToolContext:
    """Per-call environment. `state` persists across calls within one session (e.g. todos)."""

    cwd: Path
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    processes: ProcessRegistry = field(default_factory=ProcessRegistry)
    state: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] | None = None
    # Runs a subagent: (agent type, description, prompt, tool_use_id) → result. Set by the
    # engine, which owns the loop a subagent needs; None where subagents are unavailable.
    run_subagent: Callable[[str, str, str, str], Awaitable[ToolResult]] | None = None
    tool_use_id: str | None = None
    # Internal hosts (loopback, private, metadata…) WebFetch may contact: those named by
    # `WebFetch(domain:HOST)` allow rules. Filled by the engine from the permission policy.
    allowed_internal_hosts: frozenset[str] = frozenset()
    # Given a normalised absolute path, False when a Read deny rule covers it. Tools that
    # search folders (Grep, Glob) skip such files: a search over a parent folder never
    # returns a denied file's name or content. None when no Read deny rule exists.
    read_filter: Callable[[str], bool] | None = None


class Tool:
    """Base class for built-in tools. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[JSON]
    kind: ClassVar[ToolKind] = "read"

    def is_read_only(self, tool_input: JSON) -> bool:
        """True when this particular call cannot change anything outside wisp."""
        return self.kind == "read"

    def target_paths(self, tool_input: JSON) -> list[str]:
        """Filesystem paths this call reads or writes, as given (not yet normalised)."""
        return []

    def describe(self, tool_input: JSON) -> str:
        """A short human description of the call, for permission prompts."""
        return self.name

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def api_definition(self) -> JSON:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def check_input(schema: JSON, tool_input: JSON) -> str | None:
    """A cheap structural check (required keys, top-level types) kept off jsonschema's import
    cost. Returns an error message or None."""
    missing = [k for k in schema.get("required", []) if k not in tool_input]
    if missing:
        return f"InputValidationError: missing required parameter(s): {', '.join(missing)}"
    props: dict[str, JSON] = schema.get("properties", {})
    for key, value in tool_input.items():
        expected = props.get(key, {}).get("type")
        if expected and not _matches_type(value, expected):
            return f"InputValidationError: parameter `{key}` must be of type {expected}"
    return None


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _matches_type(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        if name == "null" and value is None:
            return True
        types = _PY_TYPES.get(name)
        if types is None:
            return True
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, types):
            return True
    return False
