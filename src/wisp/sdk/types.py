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

import dataclasses
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
    get_args,
)

# Names of the official `types` module that other wisp.sdk modules define.
_DEFINED_ELSEWHERE: Final = {
    name: "wisp.sdk.sessions"
    for name in (
        "SDKSessionInfo",
        "SessionMessage",
        "SessionKey",
        "SessionStore",
        "SessionStoreEntry",
        "SessionStoreListEntry",
        "SessionSummaryEntry",
        "SessionListSubkeysKey",
        "SessionStoreFlushMode",
    )
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
        _check_options(self)


# ---------------------------------------------------------------------------------------
# Option checks. Hand-written per kind of field so that constructing options costs a few
# microseconds: plain isinstance tests, no typing introspection at call time.
# ---------------------------------------------------------------------------------------

_PERMISSION_MODES: Final = get_args(PermissionMode)
_SETTING_SOURCES: Final = get_args(SettingSource)
_EFFORT_LEVELS: Final = get_args(EffortLevel)
_FLUSH_MODES: Final = get_args(_FlushMode)
_THINKING_TYPES: Final = ("adaptive", "enabled", "disabled")
# isinstance() with a tuple is faster than with a `X | Y` union built on every call.
_PATH_TYPES: Final = (str, os.PathLike)
_NUMBER_TYPES: Final = (int, float)
_PROMPT_TYPES: Final = (str, dict)

_BOOL_OPTIONS: Final = (
    "strict_mcp_config",
    "continue_conversation",
    "include_partial_messages",
    "include_hook_events",
    "forward_subagent_text",
    "verbatim_prompts",
    "fork_session",
    "enable_file_checkpointing",
)
_OPTIONAL_STR_OPTIONS: Final = (
    "resume",
    "session_id",
    "model",
    "fallback_model",
    "permission_prompt_tool_name",
    "settings",
    "user",
    "resume_session_at",
    "resume_drops_turn",
    "client_app",
)
_OPTIONAL_INT_OPTIONS: Final = ("max_turns", "max_buffer_size", "max_thinking_tokens")
_STR_LIST_OPTIONS: Final = ("allowed_tools", "disallowed_tools", "betas")
_OPTIONAL_DICT_OPTIONS: Final = ("sandbox", "output_format")
_OPTIONAL_CALLABLE_OPTIONS: Final = ("stderr", "can_use_tool")
_OPTIONAL_PATH_OPTIONS: Final = ("cwd", "cli_path")


def _wrong(name: str, expected: str, value: object) -> TypeError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return TypeError(
        f"ClaudeAgentOptions.{name} must be {expected}, got {shown} ({type(value).__name__})"
    )


def _not_one_of(name: str, allowed: tuple[str, ...], value: object) -> ValueError:
    names = ", ".join(repr(a) for a in allowed)
    return ValueError(f"ClaudeAgentOptions.{name} must be one of {names}; got {value!r}")


def _is_int(value: object) -> bool:
    return value.__class__ is int or (isinstance(value, int) and not isinstance(value, bool))


def _is_number(value: object) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, bool)


def _check_str_list(name: str, value: object, expected: str = "a list of str") -> None:
    # A tuple works wherever the official SDK takes a list (it only iterates and joins).
    if not isinstance(value, (list, tuple)):
        raise _wrong(name, expected, value)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _wrong(f"{name}[{index}]", "a str", item)


# The fast path loads each group of same-kind fields into a tuple with plain attribute
# reads (which the interpreter specialises) and tests the values; only when one is wrong
# is the group searched again by name, to say which option it was.


def _bad_bool(value: object) -> bool:
    return value is not True and value is not False


def _bad_optional_str(value: object) -> bool:
    return value is not None and not isinstance(value, str)


def _bad_optional_int(value: object) -> bool:
    return value is not None and not _is_int(value)


def _bad_optional_path(value: object) -> bool:
    return value is not None and not isinstance(value, _PATH_TYPES)


def _bad_optional_callable(value: object) -> bool:
    return value is not None and not callable(value)


def _bad_optional_dict(value: object) -> bool:
    return value is not None and not isinstance(value, dict)


def _name_the_bad_one(
    o: ClaudeAgentOptions, names: tuple[str, ...], bad: Callable[[object], bool], expected: str
) -> TypeError:
    for name in names:
        value = getattr(o, name)
        if bad(value):
            return _wrong(name, expected, value)
    raise AssertionError("no wrong value among " + ", ".join(names))  # pragma: no cover


def _check_flags_and_text(o: ClaudeAgentOptions) -> None:
    for flag in (
        o.strict_mcp_config,
        o.continue_conversation,
        o.include_partial_messages,
        o.include_hook_events,
        o.forward_subagent_text,
        o.verbatim_prompts,
        o.fork_session,
        o.enable_file_checkpointing,
    ):
        if flag is not True and flag is not False:
            raise _name_the_bad_one(o, _BOOL_OPTIONS, _bad_bool, "a bool")
    for text in (
        o.resume,
        o.session_id,
        o.model,
        o.fallback_model,
        o.permission_prompt_tool_name,
        o.settings,
        o.user,
        o.resume_session_at,
        o.resume_drops_turn,
        o.client_app,
    ):
        if text is not None and not isinstance(text, str):
            raise _name_the_bad_one(o, _OPTIONAL_STR_OPTIONS, _bad_optional_str, "a str or None")


def _check_simple(o: ClaudeAgentOptions) -> None:
    _check_flags_and_text(o)
    for number in (o.max_turns, o.max_buffer_size, o.max_thinking_tokens):
        if number is not None and not _is_int(number):
            raise _name_the_bad_one(o, _OPTIONAL_INT_OPTIONS, _bad_optional_int, "an int or None")
    for path in (o.cwd, o.cli_path):
        if path is not None and not isinstance(path, _PATH_TYPES):
            raise _name_the_bad_one(
                o, _OPTIONAL_PATH_OPTIONS, _bad_optional_path, "a str, a path or None"
            )
    for function in (o.stderr, o.can_use_tool):
        if function is not None and not callable(function):
            raise _name_the_bad_one(
                o, _OPTIONAL_CALLABLE_OPTIONS, _bad_optional_callable, "callable or None"
            )
    for mapping in (o.sandbox, o.output_format):
        if mapping is not None and not isinstance(mapping, dict):
            raise _name_the_bad_one(o, _OPTIONAL_DICT_OPTIONS, _bad_optional_dict, "a dict or None")


def _check_lists_and_numbers(o: ClaudeAgentOptions) -> None:
    for name, names in (
        ("allowed_tools", o.allowed_tools),
        ("disallowed_tools", o.disallowed_tools),
        ("betas", o.betas),
    ):
        if names.__class__ is not list or names:
            _check_str_list(name, names)
    budget = o.max_budget_usd
    if budget is not None and not _is_number(budget):
        raise _wrong("max_budget_usd", "a number or None", budget)
    if o.load_timeout_ms.__class__ is not int and not _is_int(o.load_timeout_ms):
        raise _wrong("load_timeout_ms", "an int", o.load_timeout_ms)
    add_dirs = o.add_dirs
    if add_dirs.__class__ is not list or add_dirs:
        _check_add_dirs(add_dirs)
    store = o.session_store
    if store is not None and not (
        callable(getattr(store, "append", None)) and callable(getattr(store, "load", None))
    ):
        raise _wrong("session_store", "a session store with append() and load(), or None", store)


def _check_add_dirs(add_dirs: object) -> None:
    if not isinstance(add_dirs, (list, tuple)):
        raise _wrong("add_dirs", "a list of str or paths", add_dirs)
    for index, directory in enumerate(add_dirs):
        if not isinstance(directory, _PATH_TYPES):
            raise _wrong(f"add_dirs[{index}]", "a str or a path", directory)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str):
        raise _wrong(name, "a str" if name == "session_store_flush" else "a str or None", value)
    if value not in allowed:
        raise _not_one_of(name, allowed, value)


def _check_choices(o: ClaudeAgentOptions) -> None:
    if o.permission_mode is not None:
        _check_choice("permission_mode", o.permission_mode, _PERMISSION_MODES)
    if o.effort is not None:
        _check_choice("effort", o.effort, _EFFORT_LEVELS)
    if o.session_store_flush != "batched":
        _check_choice("session_store_flush", o.session_store_flush, _FLUSH_MODES)
    sources = o.setting_sources
    if sources is not None:
        _check_str_list("setting_sources", sources, "a list of str or None")
        for source in sources:
            if source not in _SETTING_SOURCES:
                raise _not_one_of("setting_sources", _SETTING_SOURCES, source)
    skills = o.skills
    if skills is not None and skills != _SKILLS_ALL:
        if isinstance(skills, str):
            raise ValueError(
                f"ClaudeAgentOptions.skills must be 'all', a list of str or None; got {skills!r}"
            )
        _check_str_list("skills", skills, "'all', a list of str or None")


def _check_configs(o: ClaudeAgentOptions) -> None:
    tools = o.tools
    if tools is not None and not isinstance(tools, dict):
        _check_str_list("tools", tools, "a list of str, a tools preset dict or None")
    prompt = o.system_prompt
    if prompt is not None and not isinstance(prompt, _PROMPT_TYPES):
        raise _wrong("system_prompt", "a str, a system prompt dict or None", prompt)
    plugins = o.plugins
    if not isinstance(plugins, list):
        raise _wrong("plugins", "a list of plugin dicts", plugins)
    for index, plugin in enumerate(plugins):
        if not isinstance(plugin, dict):
            raise _wrong(f"plugins[{index}]", "a plugin dict", plugin)
    if o.thinking is not None:
        _check_thinking(o.thinking)
    budget = o.task_budget
    if budget is not None and not (isinstance(budget, dict) and _is_int(budget.get("total"))):
        raise _wrong("task_budget", "a dict with an int 'total', or None", budget)


def _check_thinking(thinking: object) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict):
        raise _wrong("thinking", "a thinking config dict or None", thinking)
    kind = thinking.get("type")
    if kind not in _THINKING_TYPES:
        raise ValueError(
            "ClaudeAgentOptions.thinking['type'] must be one of 'adaptive', 'enabled', "
            f"'disabled'; got {kind!r}"
        )
    if kind == "enabled" and not _is_int(thinking.get("budget_tokens")):
        raise _wrong("thinking['budget_tokens']", "an int", thinking.get("budget_tokens"))


def _check_string_maps(o: ClaudeAgentOptions) -> None:
    env = o.env
    if not isinstance(env, dict):
        raise _wrong("env", "a dict of str to str", env)
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _wrong(f"env[{key!r}]", "a str (with a str key)", value)
    extra = o.extra_args
    if not isinstance(extra, dict):
        raise _wrong("extra_args", "a dict of str to str or None", extra)
    for flag in extra:
        # Values are passed on as str(value), as the official SDK does: only the flag's
        # name must be a str.
        if not isinstance(flag, str):
            raise _wrong(f"extra_args[{flag!r}]", "an entry with a str key", flag)


def _check_servers_and_agents(o: ClaudeAgentOptions) -> None:
    servers = o.mcp_servers
    if isinstance(servers, dict):
        for key, config in servers.items():
            if not isinstance(key, str) or not isinstance(config, dict):
                raise _wrong(f"mcp_servers[{key!r}]", "a server config dict (str key)", config)
    elif not isinstance(servers, _PATH_TYPES):
        raise _wrong("mcp_servers", "a dict of server configs, a str or a path", servers)
    agents = o.agents
    if agents is not None:
        if not isinstance(agents, dict):
            raise _wrong("agents", "a dict of str to AgentDefinition or None", agents)
        for key, agent in agents.items():
            if not isinstance(key, str) or not _is_agent(agent):
                raise _wrong(f"agents[{key!r}]", "an AgentDefinition (str key)", agent)


def _is_agent(value: object) -> bool:
    if isinstance(value, AgentDefinition):
        return True
    # Another module's AgentDefinition (e.g. the official SDK's) is sent with asdict() too.
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and hasattr(value, "description")
        and hasattr(value, "prompt")
    )


def _check_hooks(hooks: object) -> None:
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise _wrong("hooks", "a dict of hook event to list of HookMatcher, or None", hooks)
    for event, matchers in hooks.items():
        if not isinstance(event, str):
            raise _wrong("hooks", "keyed by hook event names (str)", event)
        if not isinstance(matchers, list):
            raise _wrong(f"hooks[{event!r}]", "a list of HookMatcher", matchers)
        for index, matcher in enumerate(matchers):
            _check_matcher(f"hooks[{event!r}][{index}]", matcher)


def _check_matcher(where: str, matcher: object) -> None:
    # Anything with the HookMatcher attributes passes (e.g. the official class).
    callbacks = getattr(matcher, "hooks", None)
    if not isinstance(matcher, HookMatcher) and callbacks is None:
        raise _wrong(where, "a HookMatcher", matcher)
    if not isinstance(callbacks, list):
        raise _wrong(f"{where}.hooks", "a list of callables", callbacks)
    for position, callback in enumerate(callbacks):
        if not callable(callback):
            raise _wrong(f"{where}.hooks[{position}]", "callable", callback)
    pattern = getattr(matcher, "matcher", None)
    if pattern is not None and not isinstance(pattern, str):
        raise _wrong(f"{where}.matcher", "a str or None", pattern)
    timeout = getattr(matcher, "timeout", None)
    if timeout is not None and not _is_number(timeout):
        raise _wrong(f"{where}.timeout", "a number or None", timeout)


def _check_options(o: ClaudeAgentOptions) -> None:
    _check_simple(o)
    _check_lists_and_numbers(o)
    _check_choices(o)
    _check_configs(o)
    _check_string_maps(o)
    _check_servers_and_agents(o)
    if o.hooks is not None:
        _check_hooks(o.hooks)


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
