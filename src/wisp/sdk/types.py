"""The public data model of `wisp.sdk`.

Every name here matches `claude_agent_sdk.types` (version 0.2.189): the same fields in the
same order with the same defaults, and the same kind of type (dataclass, TypedDict or
Literal alias), so a program written against the official SDK keeps working when only its
import changes. `SDKSessionInfo`, `SessionMessage` and the session-store types belong to
the session code (`wisp.sdk.sessions`); they are looked up there on first use, so that
`from wisp.sdk.types import SessionMessage` works as it does with the official module.

Kept cheap to import: `dataclasses`, `typing` and modules every interpreter has loaded.
Paths are typed as `os.PathLike` rather than `pathlib.Path` so that pathlib is not needed.
"""

import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    NotRequired,
    Required,
    TypeAlias,
    TypedDict,
)

# Names of the official `types` module that other wisp.sdk modules define.
_DEFINED_ELSEWHERE: Final = {
    **{name: "wisp.sdk.sessions" for name in ("SDKSessionInfo", "SessionMessage")},
    **{name: "wisp.sdk.session_store"
       for name in ("SessionKey", "SessionStore", "SessionStoreEntry", "SessionStoreListEntry",
                    "SessionSummaryEntry", "SessionListSubkeysKey", "SessionStoreFlushMode")},
}

if not TYPE_CHECKING:  # hidden from mypy, which would otherwise accept any attribute

    def __getattr__(name: str) -> Any:
        # Imported late: the session code imports this module.
        home = _DEFINED_ELSEWHERE.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(home), name)


# ---------------------------------------------------------------------------------------
# Small literal vocabularies
# ---------------------------------------------------------------------------------------

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]

SdkBeta = Literal["context-1m-2025-08-07"]

SettingSource = Literal["user", "project", "local"]

# `ClaudeAgentOptions.skills` set to this string enables every skill the CLI finds.
_SKILLS_ALL: Final = "all"

EffortLevel: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]

# Public under this name in `wisp.sdk.sessions` (SessionStoreFlushMode); spelled out here
# so the options class needs nothing from the session-store module.
_FlushMode: TypeAlias = Literal["batched", "eager"]


# ---------------------------------------------------------------------------------------
# Prompt, tool and budget configuration
# ---------------------------------------------------------------------------------------


class SystemPromptPreset(TypedDict):
    """Claude Code's built-in system prompt, optionally with text appended."""

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    exclude_dynamic_sections: NotRequired[bool]
    """Move per-user sections (cwd, memory, git status) out of the prompt so it caches."""
    snapshot: NotRequired[bool]
    """Keep the prompt recorded on the session's first request (the default)."""


class SystemPromptCustom(TypedDict):
    """A caller-written system prompt; the dict form exists so `snapshot` can be set."""

    type: Literal["custom"]
    prompt: str
    snapshot: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """A system prompt read from a file."""

    type: Literal["file"]
    path: str


class TaskBudget(TypedDict):
    """A token budget the model is told about, so it can pace itself."""

    total: int


class ToolsPreset(TypedDict):
    """The full default Claude Code tool set."""

    type: Literal["preset"]
    preset: Literal["claude_code"]


@dataclass
class AgentDefinition:
    """A subagent the model can start with the Agent tool.

    The camelCase fields are sent to the CLI under their own names.
    """

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None
    model: str | None = None
    skills: list[str] | None = None
    memory: Literal["user", "project", "local"] | None = None
    mcpServers: list[str | dict[str, Any]] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: EffortLevel | int | None = None
    permissionMode: PermissionMode | None = None


# ---------------------------------------------------------------------------------------
# Permissions
# ---------------------------------------------------------------------------------------

PermissionUpdateDestination = Literal["userSettings", "projectSettings", "localSettings", "session"]

PermissionBehavior = Literal["allow", "deny", "ask"]

_RULE_UPDATES: Final = ("addRules", "replaceRules", "removeRules")
_DIRECTORY_UPDATES: Final = ("addDirectories", "removeDirectories")


@dataclass
class PermissionRuleValue:
    """One permission rule: a tool, and optionally what it must match (`None`: any use)."""

    tool_name: str
    rule_content: str | None = None


@dataclass
class PermissionUpdate:
    """A change to the permission rules, mode or directories, as sent to the CLI."""

    type: Literal[
        "addRules",
        "replaceRules",
        "removeRules",
        "setMode",
        "addDirectories",
        "removeDirectories",
    ]
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def to_dict(self) -> dict[str, Any]:
        """The control-protocol form.

        The CLI drops every update of a response when one is incomplete or carries a null
        `ruleContent`, so incomplete updates raise `ValueError` here instead, a missing
        rule content is left out, and a missing destination becomes `"session"`.
        """
        kind = self.type
        wire: dict[str, Any] = {"type": kind, "destination": self.destination or "session"}
        if kind in _RULE_UPDATES:
            if self.rules is None:
                raise ValueError(
                    f"PermissionUpdate(type={kind!r}) needs rules: a list of "
                    "PermissionRuleValue."
                )
            if self.behavior is None:
                raise ValueError(
                    f"PermissionUpdate(type={kind!r}) needs behavior: 'allow', 'deny' or "
                    "'ask'."
                )
            rules: list[dict[str, Any]] = []
            for rule in self.rules:
                entry: dict[str, Any] = {"toolName": rule.tool_name}
                if rule.rule_content is not None:
                    entry["ruleContent"] = rule.rule_content
                rules.append(entry)
            wire["rules"] = rules
            wire["behavior"] = self.behavior
        elif kind == "setMode":
            if self.mode is None:
                raise ValueError(
                    "PermissionUpdate(type='setMode') needs mode: a permission mode such as "
                    "'acceptEdits'."
                )
            wire["mode"] = self.mode
        elif kind in _DIRECTORY_UPDATES:
            if self.directories is None:
                raise ValueError(
                    f"PermissionUpdate(type={kind!r}) needs directories: a list of paths."
                )
            wire["directories"] = self.directories
        else:
            raise ValueError(
                f"PermissionUpdate type {kind!r} cannot be sent; expected one of addRules, "
                "replaceRules, removeRules, setMode, addDirectories, removeDirectories."
            )
        return wire

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PermissionUpdate":
        """Read the control-protocol form (the CLI's permission suggestions)."""
        raw_rules = data.get("rules")
        rules = None
        if raw_rules is not None:
            rules = [
                PermissionRuleValue(tool_name=r["toolName"], rule_content=r.get("ruleContent"))
                for r in raw_rules
            ]
        return cls(
            type=data["type"],
            rules=rules,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=data.get("directories"),
            destination=data.get("destination"),
        )


@dataclass
class ToolPermissionContext:
    """What a `can_use_tool` callback is told besides the tool name and input."""

    signal: Any | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None


@dataclass
class PermissionResultAllow:
    """Let the tool run, optionally with a changed input and permission updates."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Refuse the tool call; `interrupt` also stops the turn."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult = PermissionResultAllow | PermissionResultDeny

CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


# ---------------------------------------------------------------------------------------
# Hooks
# ---------------------------------------------------------------------------------------

HookEvent = (
    Literal["PreToolUse"]
    | Literal["PostToolUse"]
    | Literal["PostToolUseFailure"]
    | Literal["UserPromptSubmit"]
    | Literal["Stop"]
    | Literal["SubagentStop"]
    | Literal["PreCompact"]
    | Literal["Notification"]
    | Literal["SubagentStart"]
    | Literal["PermissionRequest"]
)


class HookEffort(TypedDict):
    """The reasoning effort of the turn in which a hook fires."""

    level: str


class BaseHookInput(TypedDict):
    """Fields most hook inputs share."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: NotRequired[str]
    prompt_id: NotRequired[str]
    effort: NotRequired[HookEffort]


class _SubagentContextMixin(TypedDict, total=False):
    # Optional here but required on the subagent hooks, which PEP 655 cannot express on
    # a shared base; so only the tool-lifecycle inputs mix it in.
    agent_id: str
    agent_type: str


class PreToolUseHookInput(BaseHookInput, _SubagentContextMixin):
    """Input of a PreToolUse hook."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput, _SubagentContextMixin):
    """Input of a PostToolUse hook."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str
    duration_ms: NotRequired[int]


class PostToolUseFailureHookInput(BaseHookInput, _SubagentContextMixin):
    """Input of a PostToolUseFailure hook."""

    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: NotRequired[bool]
    duration_ms: NotRequired[int]


class UserPromptSubmitHookInput(BaseHookInput):
    """Input of a UserPromptSubmit hook."""

    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class BackgroundTaskSummary(TypedDict):
    """A background task still running, as listed to Stop hooks."""

    id: str
    type: str
    status: str
    description: str
    command: NotRequired[str]
    agent_type: NotRequired[str]
    server: NotRequired[str]
    tool: NotRequired[str]
    name: NotRequired[str]


class SessionCronSummary(TypedDict):
    """A scheduled wakeup of the session, as listed to Stop hooks."""

    id: str
    schedule: str
    recurring: bool
    prompt: str


class StopHookInput(BaseHookInput):
    """Input of a Stop hook."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]
    background_tasks: NotRequired[list[BackgroundTaskSummary]]
    session_crons: NotRequired[list[SessionCronSummary]]


class SubagentStopHookInput(BaseHookInput):
    """Input of a SubagentStop hook."""

    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_transcript_path: str
    agent_type: str
    last_assistant_message: NotRequired[str]
    background_tasks: NotRequired[list[BackgroundTaskSummary]]
    session_crons: NotRequired[list[SessionCronSummary]]


class PreCompactHookInput(BaseHookInput):
    """Input of a PreCompact hook."""

    hook_event_name: Literal["PreCompact"]
    trigger: Literal["manual", "auto"]
    custom_instructions: str | None


class NotificationHookInput(BaseHookInput):
    """Input of a Notification hook."""

    hook_event_name: Literal["Notification"]
    message: str
    title: NotRequired[str]
    notification_type: str


class SubagentStartHookInput(BaseHookInput):
    """Input of a SubagentStart hook."""

    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class PermissionRequestHookInput(BaseHookInput, _SubagentContextMixin):
    """Input of a PermissionRequest hook."""

    hook_event_name: Literal["PermissionRequest"]
    tool_name: str
    tool_input: dict[str, Any]
    permission_suggestions: NotRequired[list[Any]]


HookInput = (
    PreToolUseHookInput
    | PostToolUseHookInput
    | PostToolUseFailureHookInput
    | UserPromptSubmitHookInput
    | StopHookInput
    | SubagentStopHookInput
    | PreCompactHookInput
    | NotificationHookInput
    | SubagentStartHookInput
    | PermissionRequestHookInput
)


class PreToolUseHookSpecificOutput(TypedDict):
    """What a PreToolUse hook may decide."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    """What a PostToolUse hook may add or replace."""

    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedToolOutput: NotRequired[Any]
    updatedMCPToolOutput: NotRequired[Any]


class PostToolUseFailureHookSpecificOutput(TypedDict):
    """What a PostToolUseFailure hook may add."""

    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    """What a UserPromptSubmit hook may add or set."""

    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]
    sessionTitle: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class UserPromptExpansionHookSpecificOutput(TypedDict):
    """What a UserPromptExpansion hook may add."""

    hookEventName: Literal["UserPromptExpansion"]
    additionalContext: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class SessionStartHookSpecificOutput(TypedDict):
    """What a SessionStart hook may add or set."""

    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]
    initialUserMessage: NotRequired[str]
    sessionTitle: NotRequired[str]
    watchPaths: NotRequired[list[str]]
    reloadSkills: NotRequired[bool]


class NotificationHookSpecificOutput(TypedDict):
    """What a Notification hook may add."""

    hookEventName: Literal["Notification"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    """What a SubagentStart hook may add."""

    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


class PermissionRequestHookSpecificOutput(TypedDict):
    """The decision of a PermissionRequest hook."""

    hookEventName: Literal["PermissionRequest"]
    decision: dict[str, Any]


class PostToolBatchHookSpecificOutput(TypedDict):
    """What a PostToolBatch hook may add."""

    hookEventName: Literal["PostToolBatch"]
    additionalContext: NotRequired[str]


class StopHookSpecificOutput(TypedDict):
    """Feedback a Stop hook gives the model (the conversation then goes on)."""

    hookEventName: Literal["Stop"]
    additionalContext: NotRequired[str]


class SubagentStopHookSpecificOutput(TypedDict):
    """Feedback a SubagentStop hook gives the subagent (which then goes on)."""

    hookEventName: Literal["SubagentStop"]
    additionalContext: NotRequired[str]


class PermissionDeniedHookSpecificOutput(TypedDict):
    """What a PermissionDenied hook may allow."""

    hookEventName: Literal["PermissionDenied"]
    retry: NotRequired[bool]


class PreModelSwitchHookSpecificOutput(TypedDict):
    """The decision of a PreModelSwitch hook."""

    hookEventName: Literal["PreModelSwitch"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]


class PostModelSwitchHookSpecificOutput(TypedDict):
    """What a PostModelSwitch hook may add."""

    hookEventName: Literal["PostModelSwitch"]
    additionalContext: NotRequired[str]


class ElicitationHookSpecificOutput(TypedDict):
    """An Elicitation hook's answer to an MCP elicitation request."""

    hookEventName: Literal["Elicitation"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class ElicitationResultHookSpecificOutput(TypedDict):
    """An ElicitationResult hook's override of the answer sent to the MCP server."""

    hookEventName: Literal["ElicitationResult"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class CwdChangedHookSpecificOutput(TypedDict):
    """What a CwdChanged hook may set."""

    hookEventName: Literal["CwdChanged"]
    watchPaths: NotRequired[list[str]]


class FileChangedHookSpecificOutput(TypedDict):
    """What a FileChanged hook may set."""

    hookEventName: Literal["FileChanged"]
    watchPaths: NotRequired[list[str]]


class WorktreeCreateHookSpecificOutput(TypedDict):
    """Where a WorktreeCreate hook created the worktree."""

    hookEventName: Literal["WorktreeCreate"]
    worktreePath: str


class MessageDisplayHookSpecificOutput(TypedDict):
    """Display-only text a MessageDisplay hook shows in place of a delta."""

    hookEventName: Literal["MessageDisplay"]
    displayContent: NotRequired[str]


HookSpecificOutput = (
    PreToolUseHookSpecificOutput
    | PostToolUseHookSpecificOutput
    | PostToolUseFailureHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput
    | SessionStartHookSpecificOutput
    | NotificationHookSpecificOutput
    | SubagentStartHookSpecificOutput
    | PermissionRequestHookSpecificOutput
    | UserPromptExpansionHookSpecificOutput
    | PostToolBatchHookSpecificOutput
    | StopHookSpecificOutput
    | SubagentStopHookSpecificOutput
    | PermissionDeniedHookSpecificOutput
    | PreModelSwitchHookSpecificOutput
    | PostModelSwitchHookSpecificOutput
    | ElicitationHookSpecificOutput
    | ElicitationResultHookSpecificOutput
    | CwdChangedHookSpecificOutput
    | FileChangedHookSpecificOutput
    | WorktreeCreateHookSpecificOutput
    | MessageDisplayHookSpecificOutput
)


# `async` and `continue` are Python keywords, so hook outputs spell them `async_` and
# `continue_`; the SDK renames them on the way to the CLI.
class AsyncHookJSONOutput(TypedDict):
    """Hook output that lets the hook finish in the background."""

    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict):
    """Hook output with the common control fields and an event-specific part."""

    continue_: NotRequired[bool]
    suppressOutput: NotRequired[bool]
    stopReason: NotRequired[str]
    decision: NotRequired[Literal["block"]]
    systemMessage: NotRequired[str]
    reason: NotRequired[str]
    hookSpecificOutput: NotRequired[HookSpecificOutput]


HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput


class HookContext(TypedDict):
    """The third argument of a hook callback; `signal` is always None for now."""

    signal: Any | None


HookCallback = Callable[[HookInput, str | None, HookContext], Awaitable[HookJSONOutput]]


@dataclass
class HookMatcher:
    """Callbacks for one hook event, limited to what `matcher` matches (e.g. "Bash|Write").

    `timeout` is in seconds for the whole matcher. `on_failure="block"` makes a callback
    that raises or returns nothing block the action instead of counting as no decision.
    """

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None
    on_failure: Literal["continue", "block"] | None = None


# ---------------------------------------------------------------------------------------
# MCP servers
# ---------------------------------------------------------------------------------------


class McpStdioServerConfig(TypedDict):
    """An MCP server started as a subprocess; `type` may be left out."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]


class McpSSEServerConfig(TypedDict):
    """An MCP server reached over server-sent events."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpHttpServerConfig(TypedDict):
    """An MCP server reached over streamable HTTP."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpSdkServerConfig(TypedDict):
    """An MCP server running in this process (`instance`: an `mcp.server.Server` or
    wisp's own server object); the CLI reaches it through the control protocol."""

    type: Literal["sdk"]
    name: str
    instance: Any


McpServerConfig = (
    McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig | McpSdkServerConfig
)


class McpSdkServerConfigStatus(TypedDict):
    """An in-process server's config as a status report shows it (no instance)."""

    type: Literal["sdk"]
    name: str


class McpClaudeAIProxyServerConfig(TypedDict):
    """A server proxied through claude.ai (only ever reported, never configured)."""

    type: Literal["claudeai-proxy"]
    url: str
    id: str


McpServerStatusConfig = (
    McpStdioServerConfig
    | McpSSEServerConfig
    | McpHttpServerConfig
    | McpSdkServerConfigStatus
    | McpClaudeAIProxyServerConfig
)


class McpToolAnnotations(TypedDict, total=False):
    """A tool's hints as reported in a server status (wire names)."""

    readOnly: bool
    destructive: bool
    openWorld: bool


class McpToolInfo(TypedDict):
    """One tool of an MCP server."""

    name: str
    description: NotRequired[str]
    annotations: NotRequired[McpToolAnnotations]


class McpServerInfo(TypedDict):
    """What a connected server said about itself in the MCP handshake."""

    name: str
    version: str


McpServerConnectionStatus = Literal["connected", "failed", "needs-auth", "pending", "disabled"]


class McpServerStatus(TypedDict):
    """One server in the answer to `get_mcp_status()`."""

    name: str
    status: McpServerConnectionStatus
    serverInfo: NotRequired[McpServerInfo]
    error: NotRequired[str]
    config: NotRequired[McpServerStatusConfig]
    scope: NotRequired[str]
    tools: NotRequired[list[McpToolInfo]]


class McpStatusResponse(TypedDict):
    """The answer to `get_mcp_status()`, in its wire shape."""

    mcpServers: list[McpServerStatus]


# ---------------------------------------------------------------------------------------
# Context usage
# ---------------------------------------------------------------------------------------


class ContextUsageCategory(TypedDict):
    """One slice of the context window (system prompt, tools, messages, ...)."""

    name: str
    tokens: int
    color: str
    isDeferred: NotRequired[bool]


class ContextUsageResponse(TypedDict):
    """The answer to `get_context_usage()`: what `/context` shows, in wire names."""

    categories: list[ContextUsageCategory]
    totalTokens: int
    maxTokens: int
    rawMaxTokens: int
    percentage: float
    model: str
    isAutoCompactEnabled: bool
    memoryFiles: list[dict[str, Any]]
    mcpTools: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    gridRows: list[list[dict[str, Any]]]
    autoCompactThreshold: NotRequired[int]
    deferredBuiltinTools: NotRequired[list[dict[str, Any]]]
    systemTools: NotRequired[list[dict[str, Any]]]
    systemPromptSections: NotRequired[list[dict[str, Any]]]
    slashCommands: NotRequired[dict[str, Any]]
    skills: NotRequired[dict[str, Any]]
    messageBreakdown: NotRequired[dict[str, Any]]
    apiUsage: NotRequired[dict[str, Any] | None]


# ---------------------------------------------------------------------------------------
# Plugins and sandbox
# ---------------------------------------------------------------------------------------


class SdkPluginConfig(TypedDict):
    """A plugin loaded from a local directory."""

    type: Literal["local"]
    path: str


class SandboxNetworkConfig(TypedDict, total=False):
    """Network isolation of sandboxed commands."""

    allowedDomains: list[str]
    deniedDomains: list[str]
    allowManagedDomainsOnly: bool
    allowUnixSockets: list[str]
    allowAllUnixSockets: bool
    allowLocalBinding: bool
    allowMachLookup: list[str]
    httpProxyPort: int
    socksProxyPort: int


# Command substring ("*": any command) -> substrings of violations not to report.
SandboxIgnoreViolations: TypeAlias = dict[str, list[str]]


class SandboxSettings(TypedDict, total=False):
    """How Bash commands are sandboxed (filesystem and network isolation)."""

    enabled: bool
    autoAllowBashIfSandboxed: bool
    excludedCommands: list[str]
    allowUnsandboxedCommands: bool
    network: SandboxNetworkConfig
    ignoreViolations: SandboxIgnoreViolations
    enableWeakerNestedSandbox: bool


# ---------------------------------------------------------------------------------------
# Content blocks
# ---------------------------------------------------------------------------------------


@dataclass
class TextBlock:
    """Text."""

    text: str


@dataclass
class ThinkingBlock:
    """The model's reasoning, with the signature the API needs to accept it back."""

    thinking: str
    signature: str


@dataclass
class ToolUseBlock:
    """A tool call the model made."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    """The result of a tool call."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ServerToolName = Literal[
    "advisor",
    "web_search",
    "web_fetch",
    "code_execution",
    "bash_code_execution",
    "text_editor_code_execution",
    "tool_search_tool_regex",
    "tool_search_tool_bm25",
]


@dataclass
class ServerToolUseBlock:
    """A call of a tool the API itself runs (no result is expected from the caller)."""

    id: str
    name: ServerToolName
    input: dict[str, Any]


@dataclass
class ServerToolResultBlock:
    """The result of a server-run tool, as the API sent it."""

    tool_use_id: str
    content: dict[str, Any]


ContentBlock = (
    TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ServerToolUseBlock
    | ServerToolResultBlock
)


# ---------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------

AssistantMessageError = Literal[
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
]

# Newer CLIs may send other kinds; anything unknown is "not human".
MessageOriginKind = Literal[
    "human",
    "channel",
    "peer",
    "task-notification",
    "coordinator",
    "unclassified",
    "observer",
    "auto-continuation",
    "observer-activity",
]

TaskNotificationOriginSubkind = Literal["scheduled-trigger", "peer-send-message"]

# Where a user turn came from. The functional form is needed for the `from` key. Only
# `kind` is always there; the CLI's dict is passed through with any extra keys.
MessageOrigin = TypedDict(
    "MessageOrigin",
    {
        "kind": Required[MessageOriginKind],
        "server": str,
        "from": str,
        "name": str,
        "fromSession": str,
        "senderTaskId": str,
        "body": str,
        "verifiedPeerPid": int,
        "subkind": TaskNotificationOriginSubkind,
    },
    total=False,
)


@dataclass
class UserMessage:
    """A user turn: a prompt, or tool results (`content` is then a list of blocks)."""

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | None = None
    origin: MessageOrigin | None = None


@dataclass
class AssistantMessage:
    """One assistant message of the model."""

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: AssistantMessageError | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


@dataclass
class SystemMessage:
    """A system frame; `data` is the whole frame (for `init`, see `SystemInitData`)."""

    subtype: str
    data: dict[str, Any]


class SystemInitMcpServer(TypedDict):
    """An MCP server as listed in the init frame."""

    name: str
    status: str
    source: NotRequired[str]


class SystemInitPlugin(TypedDict):
    """A loaded plugin as listed in the init frame."""

    name: str
    path: str
    version: NotRequired[str]


class SystemInitPluginError(TypedDict):
    """A plugin that failed to load, as listed in the init frame."""

    plugin: str
    type: str
    message: str
    path: NotRequired[str]


FastModeState = Literal["off", "cooldown", "on"]

FastModeDisabledReason = Literal[
    "free",
    "preference",
    "extra_usage_disabled",
    "network_error",
    "unknown",
    "not_first_party",
    "disabled_by_env",
    "model_not_allowed",
    "sdk_opt_in_required",
    "pending",
]


class SystemInitData(TypedDict):
    """The `data` of a `system`/`init` message (not validated by the parser)."""

    type: Literal["system"]
    subtype: Literal["init"]
    uuid: str
    session_id: str
    agents: NotRequired[list[str]]
    apiKeySource: str
    betas: NotRequired[list[str]]
    claude_code_version: str
    cwd: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    model: str
    permissionMode: PermissionMode
    slash_commands: list[str]
    terminal_slash_commands: NotRequired[list[str]]
    output_style: str
    skills: list[str]
    plugins: list[SystemInitPlugin]
    plugin_errors: NotRequired[list[SystemInitPluginError]]
    fast_mode_state: NotRequired[FastModeState]
    fast_mode_disabled_reason: NotRequired[FastModeDisabledReason]
    capabilities: NotRequired[list[str]]


class TaskUsage(TypedDict):
    """What a background task has used so far."""

    total_tokens: int
    tool_uses: int
    duration_ms: int


TaskNotificationStatus = Literal["completed", "failed", "stopped"]

# `task_updated` reports `killed` where `task_notification` says `stopped`.
TaskUpdatedStatus = Literal["pending", "running", "paused", "completed", "failed", "killed"]

# Finished, in either vocabulary.
TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})


@dataclass
class TaskStartedMessage(SystemMessage):
    """A background task started (still a `SystemMessage`, with the raw frame in `data`)."""

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass
class TaskProgressMessage(SystemMessage):
    """A background task made progress."""

    task_id: str
    description: str
    usage: TaskUsage
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@dataclass
class TaskNotificationMessage(SystemMessage):
    """A background task ended. Some endings arrive only as a `TaskUpdatedMessage`."""

    task_id: str
    status: TaskNotificationStatus
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: TaskUsage | None = None


@dataclass
class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed; `status` comes from `patch` and is terminal
    when it is in `TERMINAL_TASK_STATUSES`."""

    task_id: str
    patch: dict[str, Any]
    status: TaskUpdatedStatus | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class MirrorErrorMessage(SystemMessage):
    """Mirroring the transcript to a session store failed (the session goes on).

    Made by the SDK itself, never sent by the CLI. `key` is a `SessionKey`.
    """

    key: dict[str, Any] | None = None
    error: str = ""


@dataclass
class DeferredToolUse:
    """The tool call a PreToolUse hook deferred, which ended the run."""

    id: str
    name: str
    input: dict[str, Any]


class ModelUsage(TypedDict):
    """Tokens and cost of one model in a run (the CLI's camelCase keys)."""

    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int
    canonicalModel: NotRequired[str]
    provider: NotRequired[str]


@dataclass
class ResultMessage:
    """The end of a turn: outcome, cost and usage."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, ModelUsage] | None = None
    permission_denials: list[Any] | None = None
    deferred_tool_use: DeferredToolUse | None = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None
    origin: MessageOrigin | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


@dataclass
class StreamEvent:
    """One raw Messages API stream event (with `include_partial_messages`)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


RateLimitStatus = Literal["allowed", "allowed_warning", "rejected"]

RateLimitType = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "overage"]


@dataclass
class RateLimitInfo:
    """The rate-limit state; `raw` keeps the CLI's whole dict."""

    status: RateLimitStatus
    resets_at: int | None = None
    rate_limit_type: RateLimitType | None = None
    utilization: float | None = None
    overage_status: RateLimitStatus | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class RateLimitEvent:
    """The rate-limit state changed."""

    rate_limit_info: RateLimitInfo
    uuid: str
    session_id: str


@dataclass
class ConversationResetMessage:
    """The conversation was replaced (e.g. `/clear`) on the same connection; running
    totals on later results start again from zero."""

    new_conversation_id: str
    uuid: str
    session_id: str


@dataclass
class HookEventMessage(SystemMessage):
    """A hook started or answered (`subtype` `hook_started`/`hook_response`), sent with
    `include_hook_events`."""

    hook_event_name: str = ""
    session_id: str | None = None
    uuid: str | None = None


Message = (
    UserMessage
    | AssistantMessage
    | SystemMessage
    | ResultMessage
    | StreamEvent
    | RateLimitEvent
    | ConversationResetMessage
)


# ---------------------------------------------------------------------------------------
# Thinking
# ---------------------------------------------------------------------------------------

ThinkingDisplay = Literal["summarized", "omitted"]


class ThinkingConfigAdaptive(TypedDict):
    """The model decides when and how much to think."""

    type: Literal["adaptive"]
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigEnabled(TypedDict):
    """A fixed thinking budget."""

    type: Literal["enabled"]
    budget_tokens: int
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigDisabled(TypedDict):
    """No extended thinking."""

    type: Literal["disabled"]


ThinkingConfig = ThinkingConfigAdaptive | ThinkingConfigEnabled | ThinkingConfigDisabled


class CanUseToolShadowedWarning(UserWarning):
    """`can_use_tool` is set, but other options approve some tool calls before it is asked."""


# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------


@dataclass
class ClaudeAgentOptions:
    """Everything a query or client session is started with.

    Checked on construction (and by `dataclasses.replace`): a value of the wrong kind
    raises `TypeError`; an unknown permission mode, setting source, effort, flush mode,
    thinking type or skills string raises `ValueError`. Both name the option.
    """

    tools: list[str] | ToolsPreset | None = None
    allowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | SystemPromptPreset | SystemPromptCustom | SystemPromptFile | None = None
    mcp_servers: dict[str, McpServerConfig] | str | os.PathLike[str] = field(default_factory=dict)
    strict_mcp_config: bool = False
    permission_mode: PermissionMode | None = None
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    fallback_model: str | None = None
    betas: list[SdkBeta] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cwd: str | os.PathLike[str] | None = None
    cli_path: str | os.PathLike[str] | None = None
    settings: str | None = None
    add_dirs: list[str | os.PathLike[str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    extra_args: dict[str, str | None] = field(default_factory=dict)
    max_buffer_size: int | None = None
    # Deprecated and unread, kept so programs that pass it still construct.
    debug_stderr: Any = sys.stderr
    stderr: Callable[[str], None] | None = None
    can_use_tool: CanUseTool | None = None
    hooks: dict[HookEvent, list[HookMatcher]] | None = None
    user: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    verbatim_prompts: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    agents: dict[str, AgentDefinition] | None = None
    setting_sources: list[SettingSource] | None = None
    skills: list[str] | Literal["all"] | None = None
    sandbox: SandboxSettings | None = None
    plugins: list[SdkPluginConfig] = field(default_factory=list)
    max_thinking_tokens: int | None = None
    thinking: ThinkingConfig | None = None
    effort: EffortLevel | None = None
    output_format: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    # A `wisp.sdk.sessions.SessionStore` (duck-typed: `append` and `load` are required).
    session_store: Any = None
    session_store_flush: _FlushMode = "batched"
    load_timeout_ms: int = 60_000
    task_budget: TaskBudget | None = None
    client_app: str | None = None

    def __post_init__(self) -> None:
        from wisp.sdk._options_check import check_options  # a module that needs these types

        check_options(self)


# ---------------------------------------------------------------------------------------
# Control protocol shapes (the official module defines them too; programs may import them)
# ---------------------------------------------------------------------------------------


class SDKControlInterruptRequest(TypedDict):
    subtype: Literal["interrupt"]


class SDKControlPermissionRequest(TypedDict):
    subtype: Literal["can_use_tool"]
    tool_name: str
    input: dict[str, Any]
    permission_suggestions: list[dict[str, Any]] | None
    blocked_path: str | None
    decision_reason: NotRequired[str]
    title: NotRequired[str]
    display_name: NotRequired[str]
    description: NotRequired[str]
    tool_use_id: str
    agent_id: NotRequired[str]


class SDKControlInitializeRequest(TypedDict):
    subtype: Literal["initialize"]
    hooks: dict[HookEvent, Any] | None
    agents: NotRequired[dict[str, dict[str, Any]]]
    excludeDynamicSections: NotRequired[bool]
    systemPromptSnapshot: NotRequired[bool]
    skills: NotRequired[list[str]]
    forwardSubagentText: NotRequired[bool]


class SDKControlSetPermissionModeRequest(TypedDict):
    subtype: Literal["set_permission_mode"]
    mode: PermissionMode


class SDKHookCallbackRequest(TypedDict):
    subtype: Literal["hook_callback"]
    callback_id: str
    input: Any
    tool_use_id: str | None


class SDKControlMcpMessageRequest(TypedDict):
    subtype: Literal["mcp_message"]
    server_name: str
    message: Any


class SDKControlRewindFilesRequest(TypedDict):
    subtype: Literal["rewind_files"]
    user_message_id: str


class SDKControlMcpReconnectRequest(TypedDict):
    subtype: Literal["mcp_reconnect"]
    serverName: str


class SDKControlMcpToggleRequest(TypedDict):
    subtype: Literal["mcp_toggle"]
    serverName: str
    enabled: bool


class SDKControlStopTaskRequest(TypedDict):
    subtype: Literal["stop_task"]
    task_id: str


class SDKControlRequest(TypedDict):
    type: Literal["control_request"]
    request_id: str
    request: (
        SDKControlInterruptRequest
        | SDKControlPermissionRequest
        | SDKControlInitializeRequest
        | SDKControlSetPermissionModeRequest
        | SDKHookCallbackRequest
        | SDKControlMcpMessageRequest
        | SDKControlRewindFilesRequest
        | SDKControlMcpReconnectRequest
        | SDKControlMcpToggleRequest
        | SDKControlStopTaskRequest
    )


class ControlResponse(TypedDict):
    subtype: Literal["success"]
    request_id: str
    response: dict[str, Any] | None


class ControlErrorResponse(TypedDict):
    subtype: Literal["error"]
    request_id: str
    error: str


class SDKControlResponse(TypedDict):
    type: Literal["control_response"]
    response: ControlResponse | ControlErrorResponse
