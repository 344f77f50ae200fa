"""The tool contract. The engine sits above (permission check → hooks → `run`); below is the OS.

A tool declares what it touches (`kind`, `target_paths`) so the permission layer can judge a
call without knowing the tool, and reports its outcome as a `ToolResult`: the text the model
reads plus `data`, the structured `tool_use_result` that stream-json clients see.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from wisp.jsontypes import JSON
from wisp.permissions.judged import RuleSubject, ToolKind
from wisp.processes import ProcessRegistry

if TYPE_CHECKING:
    import subprocess

    from wisp.sandbox.runner import CommandSandbox
    from wisp.tools.editor_files import EditorFiles, EditorTerminals

# ToolKind is re-exported: tools declare their kind with the permission layer's own literal.
__all__ = ["JSON", "BackgroundTasks", "PlanControl", "Tool", "ToolContext", "ToolKind",
           "ToolResult", "check_input"]


class BackgroundTasks(Protocol):
    """Where a tool hands work that outlives its call (the session's task registry,
    `wisp.engine.tasks`): `spawn(output_file)` starts the command, writing its output
    there. Returns the task's id and the output file."""

    def start_command(self, spawn: Callable[[Path], subprocess.Popen[bytes]], *,
                      description: str, tool_use_id: str,
                      timeout_ms: int | None) -> tuple[str, str]: ...


class PlanControl(Protocol):
    """Plan mode as a tool sees it (ExitPlanMode): where the session's plan is kept, and
    `leave()`, which ends plan mode (to default, unless the approval already chose a mode)
    and returns the mode now in force."""

    @property
    def path(self) -> Path: ...

    def leave(self) -> str: ...


# ToolResult and ToolContext are plain classes, not dataclasses: this module loads on every
# run, and defining a dataclass costs ~1 ms against ~0.02 ms for a plain class.


class ToolResult:
    """What a tool call produced. `content` goes to the model; `data` to stream-json clients.
    Immutable by convention: build a new one to change it."""

    __slots__ = ("content", "data", "is_error")

    def __init__(self, content: str | list[JSON], is_error: bool = False,
                 data: Any = None) -> None:
        self.content = content
        self.is_error = is_error
        self.data = data

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=message, is_error=True, data=f"Error: {message}")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ToolResult) and self.content == other.content
                and self.is_error == other.is_error and self.data == other.data)

    __hash__ = None  # type: ignore[assignment]  # content is usually a list

    def __repr__(self) -> str:
        return (f"ToolResult(content={self.content!r}, is_error={self.is_error!r}, "
                f"data={self.data!r})")


class ToolContext:
    """Per-call environment. `state` persists across calls within one session (e.g. todos).

    - run_subagent runs a subagent: (agent type, description, prompt, tool_use_id,
      background) → result. Set by the engine, which owns the loop a subagent needs; None
      where subagents are unavailable.
    - tasks takes commands that run on in the background (`BackgroundTasks`); None where
      background work is not offered (inside a subagent).
    - allowed_internal_hosts: internal hosts (loopback, private, metadata…) WebFetch may
      contact, those named by `WebFetch(domain:HOST)` allow rules. Filled by the engine from
      the permission policy.
    - read_filter: given a normalised absolute path, False when a Read deny rule covers it.
      Tools that search folders (Grep, Glob) skip such files: a search over a parent folder
      never returns a denied file's name or content. None when no Read deny rule exists.
    - sandbox: the session's OS sandbox (`sandbox.enabled`), which model commands run in;
      None when it is off.
    - plan: plan mode's controls (`PlanControl`) while the session is in plan mode, else
      None.
    - files: the editor's view of the files (`wisp.tools.editor_files`), which Read, Write
      and Edit go through when a front end connected one; None: the disk. terminals: the
      editor's terminals, where Bash runs what the sandbox need not hold; None: here.
    """

    __slots__ = ("abort", "allowed_internal_hosts", "cwd", "env", "files", "plan",
                 "processes", "read_filter", "run_subagent", "sandbox", "state", "tasks",
                 "terminals", "tool_use_id")

    def __init__(
        self,
        cwd: Path,
        *,
        abort: asyncio.Event | None = None,
        processes: ProcessRegistry | None = None,
        state: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        run_subagent: Callable[[str, str, str, str, bool], Awaitable[ToolResult]] | None = None,
        tool_use_id: str | None = None,
        allowed_internal_hosts: frozenset[str] = frozenset(),
        read_filter: Callable[[str], bool] | None = None,
        tasks: BackgroundTasks | None = None,
        sandbox: CommandSandbox | None = None,
        files: EditorFiles | None = None,
        terminals: EditorTerminals | None = None,
        plan: PlanControl | None = None,
    ) -> None:
        self.cwd = cwd
        self.abort = asyncio.Event() if abort is None else abort
        self.processes = ProcessRegistry() if processes is None else processes
        self.state: dict[str, Any] = {} if state is None else state
        self.env = env
        self.run_subagent = run_subagent
        self.tool_use_id = tool_use_id
        self.allowed_internal_hosts = allowed_internal_hosts
        self.read_filter = read_filter
        self.tasks = tasks
        self.sandbox = sandbox
        self.files = files
        self.terminals = terminals
        self.plan = plan

    def reading_only(self, may_read: Callable[[str], bool]) -> ToolContext:
        """This context with its read filter narrowed to `may_read` as well."""
        narrowed = copy.copy(self)
        earlier = self.read_filter
        narrowed.read_filter = (may_read if earlier is None
                                else lambda path: may_read(path) and earlier(path))
        return narrowed

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in (
            "cwd", "abort", "processes", "state", "env", "run_subagent", "tool_use_id",
            "allowed_internal_hosts", "read_filter"))
        return f"ToolContext({fields})"


class Tool:
    """Base class for built-in tools. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[JSON]
    kind: ClassVar[ToolKind] = "read"
    # What permission rules with content judge for this tool (`Bash(npm test:*)`,
    # `WebFetch(domain:x)`, `Skill(pdf)`): "paths" (target_paths, by Read/Edit path rules),
    # "command" (a shell command line, parsed and judged command by command), "domain", or
    # "name" (`subject` names what the call uses, e.g. a skill: exact or `prefix:*`).
    rule_subject: ClassVar[RuleSubject] = "paths"
    # Reads that descend into folders (Grep, Glob): a denied subtree below the folder is
    # skipped by the tool itself rather than denying the whole search.
    searches_folders: ClassVar[bool] = False
    # A tool whose point is the user's answer (ExitPlanMode): no mode grants it; it is
    # asked about unless a rule names it.
    asks_user: ClassVar[bool] = False

    @property
    def rule_name(self) -> str:
        """The name permission rules use for this tool: its own, unless it is another
        tool under a second name (a served agent's `bash` is wisp's Bash, and `Bash(rm:*)`
        must reach it whatever the model called it)."""
        return self.name

    def subject(self, tool_input: JSON) -> str:
        """The command line, domain or name a "command", "domain" or "name" rule is
        matched against."""
        return ""

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
