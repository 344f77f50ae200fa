"""The tools a served agent has, under the names clients know.

An agent's `tools` may hold the `agent_toolset_20260401` toolset (`bash`, `read`, `write`,
`edit`, `glob`, `grep`, with the input schemas of the official SDK's
`beta_agent_toolset_20260401`, so a client-side runner can execute any call, and
`web_fetch`) and `custom` tools. `web_fetch` always runs here, through wisp's WebFetch (a
server tool, as in the API); `web_search` is never offered (no search backend). Where
the other calls run depends on the session's environment:

- `cloud`: toolset calls run here, in the session's workspace, through wisp's own tools
  (`CloudTool` maps each call onto Bash, Read, Write, Edit, Glob or Grep, so the
  permission engine judges it exactly as it would judge the built-in);
- `self_hosted`: toolset calls are handed to the client (`agent.tool_use`, answered by
  `user.tool_result`);
- custom tools are always the client's (`agent.custom_tool_use`, answered by
  `user.custom_tool_result`).

A client-run call is a `ClientTool` whose `run` waits for the client's answer through a
`ClientCalls` broker: the session reports `requires_action` meanwhile.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from wisp.jsontypes import JSON
from wisp.tools.base import Tool, ToolContext, ToolKind, ToolResult

TOOLSET_TYPE = "agent_toolset_20260401"
TOOLSET_NAMES = ("bash", "read", "write", "edit", "glob", "grep", "web_fetch")
# Run by the service whatever the environment (the SDK's client-side toolset has no web
# tools: in the API they are server tools).
SERVER_RUN = frozenset({"web_fetch"})

_STRING: JSON = {"type": "string"}
SCHEMAS: dict[str, JSON] = {
    "bash": {"type": "object", "properties": {
        "command": {"type": "string", "description": "The shell command to run."},
        "restart": {"type": "boolean", "description": "Start a fresh shell instead."},
        "timeout_ms": {"type": "integer", "description": "Time limit in milliseconds."}}},
    "read": {"type": "object", "required": ["file_path"], "properties": {
        "file_path": {"type": "string", "description": "The file to read."},
        "view_range": {"type": "array", "items": {"type": "integer"},
                       "description": "[first line, last line], 1-based; last <= 0 "
                                      "means to the end."}}},
    "write": {"type": "object", "required": ["file_path", "content"], "properties": {
        "file_path": _STRING, "content": {"type": "string",
                                          "description": "The whole new content."}}},
    "edit": {"type": "object", "required": ["file_path", "old_string", "new_string"],
             "properties": {"file_path": _STRING, "old_string": _STRING,
                            "new_string": _STRING, "replace_all": {"type": "boolean"}}},
    "glob": {"type": "object", "required": ["pattern"], "properties": {
        "pattern": {"type": "string", "description": "A glob such as **/*.py."},
        "path": {"type": "string", "description": "The folder to search (default: "
                                                  "the workspace)."}}},
    "grep": {"type": "object", "required": ["pattern"], "properties": {
        "pattern": {"type": "string", "description": "A regular expression."},
        "path": {"type": "string", "description": "The folder or file to search."}}},
    "web_fetch": {"type": "object", "required": ["url"], "properties": {
        "url": {"type": "string", "description": "The http(s) URL to fetch."},
        "prompt": {"type": "string", "description": "What to look for in the page."}}},
}
DESCRIPTIONS = {
    "bash": "Run a shell command in the session's workspace and return its output.",
    "read": "Read a text file, whole or a range of lines.",
    "write": "Create or overwrite a file with the given content.",
    "edit": "Replace text in a file: old_string must occur once unless replace_all.",
    "glob": "List files matching a glob pattern, newest first.",
    "grep": "Search file contents for a regular expression; returns matching lines.",
    "web_fetch": "Fetch a web page and return its readable text.",
}
# Calls that change nothing: after a crash, a call of these without a result is run again;
# any other is recorded as interrupted instead (it may have run in part).
IDEMPOTENT = frozenset({"read", "glob", "grep", "web_fetch"})
# What each toolset tool becomes in the cloud: wisp's built-in, and its input mapped.
BUILTIN_NAMES = {"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit",
            "glob": "Glob", "grep": "Grep", "web_fetch": "WebFetch"}


def to_builtin_input(name: str, tool_input: JSON) -> JSON:
    """A toolset call's input as the built-in tool takes it."""
    if name == "bash":
        mapped: JSON = {"command": tool_input.get("command") or ""}
        if isinstance(tool_input.get("timeout_ms"), int) and tool_input["timeout_ms"] > 0:
            mapped["timeout"] = tool_input["timeout_ms"]
        return mapped
    if name == "read":
        return _read_input(tool_input)
    if name == "grep":
        return {**_only(tool_input, "pattern", "path"), "output_mode": "content", "-n": True}
    if name == "web_fetch":
        return {"url": tool_input.get("url"),
                "prompt": tool_input.get("prompt") or "Read the page."}
    return dict(tool_input)


def _read_input(tool_input: JSON) -> JSON:
    mapped: JSON = {"file_path": tool_input.get("file_path")}
    view = tool_input.get("view_range")
    if isinstance(view, list) and len(view) == 2 and all(isinstance(n, int) for n in view):
        first, last = max(1, view[0]), view[1]
        mapped["offset"] = first
        if last > 0:
            mapped["limit"] = max(1, last - first + 1)
    return mapped


def _only(tool_input: JSON, *keys: str) -> JSON:
    return {k: tool_input[k] for k in keys if k in tool_input}


class CloudTool(Tool):
    """A toolset tool run here, by the built-in it maps onto. Permission questions are
    answered by the built-in, for the mapped input and under its name (`rule_name`), so
    the rules on Bash/Read/Edit paths and commands hold whatever name the model used."""

    def __init__(self, name: str, builtin: Tool) -> None:
        self.name = name  # type: ignore[misc]
        self.description = DESCRIPTIONS[name]  # type: ignore[misc]
        self.input_schema = SCHEMAS[name]  # type: ignore[misc]
        self.kind = builtin.kind  # type: ignore[misc]
        self.rule_subject = builtin.rule_subject  # type: ignore[misc]
        self.searches_folders = builtin.searches_folders  # type: ignore[misc]
        self.builtin = builtin

    @property
    def rule_name(self) -> str:
        return self.builtin.name  # `Bash(…)`, `Read(…)` rules judge `bash`, `read` calls

    def _mapped(self, tool_input: JSON) -> JSON:
        return to_builtin_input(self.name, tool_input)

    def subject(self, tool_input: JSON) -> str:
        return self.builtin.subject(self._mapped(tool_input))

    def is_read_only(self, tool_input: JSON) -> bool:
        return self.builtin.is_read_only(self._mapped(tool_input))

    def target_paths(self, tool_input: JSON) -> list[str]:
        return self.builtin.target_paths(self._mapped(tool_input))

    def describe(self, tool_input: JSON) -> str:
        return self.builtin.describe(self._mapped(tool_input))

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        if self.name == "bash" and tool_input.get("restart"):
            return ToolResult("The shell was restarted.", data="restarted")
        if self.name == "bash" and not tool_input.get("command"):
            return ToolResult.error("bash: command is required")
        return await self.builtin.run(self._mapped(tool_input), ctx)


class WebFetchTool(CloudTool):
    """`web_fetch` with the agent config's `allowed_domains` / `blocked_domains` (a
    domain also covers its subdomains) and `max_content_tokens` (about 4 characters a
    token, as the result is cut)."""

    def __init__(self, builtin: Tool, options: JSON) -> None:
        super().__init__("web_fetch", builtin)
        self.allowed = [d.lower().strip(".") for d in options.get("allowed_domains") or []]
        self.blocked = [d.lower().strip(".") for d in options.get("blocked_domains") or []]
        limit = options.get("max_content_tokens")
        self.max_chars = int(limit) * 4 if isinstance(limit, int) else None

    def _refusal(self, tool_input: JSON) -> str | None:
        host = self.builtin.subject(self._mapped(tool_input))
        if any(_within(host, d) for d in self.blocked):
            return f"web_fetch: {host} is a blocked domain for this agent"
        if self.allowed and not any(_within(host, d) for d in self.allowed):
            return f"web_fetch: {host} is not among this agent's allowed domains"
        return None

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        refusal = self._refusal(tool_input)
        if refusal is not None:
            return ToolResult.error(refusal)
        result = await self.builtin.run(self._mapped(tool_input), ctx)
        if (self.max_chars is not None and isinstance(result.content, str)
                and len(result.content) > self.max_chars):
            return ToolResult(result.content[:self.max_chars] + "\n[cut at max_content_tokens]",
                              result.is_error, result.data)
        return result


def _within(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def cloud_tools(builtins: dict[str, Tool], names: list[str],
                web_fetch: JSON | None = None) -> dict[str, Tool]:
    """The service-run tools of `names`; `web_fetch` holds its agent config's options."""
    return {name: WebFetchTool(builtins["WebFetch"], web_fetch or {}) if name == "web_fetch"
            else CloudTool(name, builtins[BUILTIN_NAMES[name]]) for name in names}


# A client-run call: (kind, name, input, tool_use_id) → the client's result. `kind` is
# "custom" (agent.custom_tool_use) or "toolset" (agent.tool_use).
ClientCall = Callable[[str, str, JSON, str], Awaitable[ToolResult]]
# The client's `user.tool_confirmation` for a model tool_use id.
Confirm = Callable[[str], Awaitable[JSON]]


class ClientTool(Tool):
    """A tool the client runs: a custom tool, or a toolset tool of a self-hosted session.
    Calling it hands the call to the client and waits for the answer."""

    kind: ClassVar[ToolKind] = "execute"

    def __init__(self, definition: JSON, call_kind: str, call: ClientCall) -> None:
        self.name = str(definition["name"])  # type: ignore[misc]
        self.description = str(definition.get("description") or "")  # type: ignore[misc]
        schema = definition.get("input_schema")
        self.input_schema = schema if isinstance(schema, dict) else {  # type: ignore[misc]
            "type": "object"}
        self.call_kind = call_kind
        self._call = call

    def is_read_only(self, tool_input: JSON) -> bool:
        # The client decides what runs on its side; wisp's permission engine has nothing
        # to protect here, so such calls are not asked about (always_ask is applied by
        # the session, which asks the client before handing the call over).
        return True

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        return await self._call(self.call_kind, self.name, tool_input, ctx.tool_use_id or "")


class DelegatingTool(Tool):
    """A tool that stands in front of another: it is judged as the inner tool is (name,
    rule name, subject, paths) and runs it; subclasses add what happens around the run."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.description = inner.description  # type: ignore[misc]
        self.input_schema = inner.input_schema  # type: ignore[misc]
        self.kind = inner.kind  # type: ignore[misc]
        self.rule_subject = inner.rule_subject  # type: ignore[misc]
        self.searches_folders = inner.searches_folders  # type: ignore[misc]

    @property
    def rule_name(self) -> str:
        return self.inner.rule_name

    def subject(self, tool_input: JSON) -> str:
        return self.inner.subject(tool_input)

    def is_read_only(self, tool_input: JSON) -> bool:
        return self.inner.is_read_only(tool_input)

    def describe(self, tool_input: JSON) -> str:
        return self.inner.describe(tool_input)

    def target_paths(self, tool_input: JSON) -> list[str]:
        return self.inner.target_paths(tool_input)

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        return await self.inner.run(tool_input, ctx)


class ConfirmedTool(DelegatingTool):
    """A tool whose calls wait for the client's `user.tool_confirmation` (the agent config
    says `always_ask`): run on allow, refused with the client's message on deny."""

    def __init__(self, inner: Tool, confirm: Confirm) -> None:
        super().__init__(inner)
        self._confirm = confirm

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        answer = await self._confirm(ctx.tool_use_id or "")
        if answer.get("result") != "allow":
            message = answer.get("deny_message") or "The user declined this tool call."
            return ToolResult.error(str(message))
        return await self.inner.run(tool_input, ctx)


class WrittenFirst(DelegatingTool):
    """A tool that runs only once the session's log holds its call: the driver's writes
    are made off the event loop (`wisp.serve.log_writer`), and a crash must not leave a
    tool's effects without the `agent.tool_use` that asked for them."""

    def __init__(self, inner: Tool, flush: Callable[[], Awaitable[None]]) -> None:
        super().__init__(inner)
        self.asks_user = inner.asks_user  # type: ignore[misc]
        self._flush = flush

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        await self._flush()
        return await self.inner.run(tool_input, ctx)

    def api_definition(self) -> JSON:
        return self.inner.api_definition()  # a tool may tell the model more (Skill)
