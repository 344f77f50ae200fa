"""The rest of seed 000's client → wisp control requests, as types and checks.

`wisp.wire.protocol` holds the requests the SDKs' basic contract names; these are the ones
long-lived hosts (editors, desktop apps) call besides: the workspace (`set_cwd`,
`register_repo_root`, `file_suggestions`, ...), the prompt queue (`cancel_async_message`),
direct MCP calls, feedback, and the questions answered by a side model call
(`side_question`, `generate_session_title`). Which of seed 000's subtypes wisp answers, and
which it refuses with a precise error, is tabled in docs/protocol.md ("Every control
subtype"). Like `wisp.wire.protocol`, this imports nothing heavier than `typing`.
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from wisp.errors import InvalidRequest
from wisp.jsontypes import JSON
from wisp.wire.protocol import RequestType, field


class GetBinaryVersion(TypedDict):
    subtype: Literal["get_binary_version"]


class FileSuggestions(TypedDict):
    subtype: Literal["file_suggestions"]
    query: str


class GetWorkspaceDiff(TypedDict):
    subtype: Literal["get_workspace_diff"]


class SeedReadState(TypedDict):
    """Tells the Edit tool the host has shown the model this version of the file."""

    subtype: Literal["seed_read_state"]
    path: str
    mtime: float


class SetCwd(TypedDict):
    subtype: Literal["set_cwd"]
    path: str
    trust_accepted: NotRequired[bool | None]
    trusted_directory: NotRequired[str | None]


class RegisterRepoRoot(TypedDict):
    subtype: Literal["register_repo_root"]
    directory: str
    reload_claude_md: NotRequired[bool | None]
    reload_plugins: NotRequired[bool | None]
    reload_skills: NotRequired[bool | None]


class AddDirectory(TypedDict):
    """The string-only twin of `register_repo_root` (`/add-dir` from a host)."""

    subtype: Literal["add_directory"]
    path: NotRequired[str]
    directory: NotRequired[str]


class CancelAsyncMessage(TypedDict):
    subtype: Literal["cancel_async_message"]
    message_uuid: str


class BackgroundTasks(TypedDict):
    subtype: Literal["background_tasks"]
    tool_use_id: NotRequired[str | None]


class SetMcpPermissionModeOverride(TypedDict):
    """`mode` null clears the override; only `default` (ask) tightens anything."""

    subtype: Literal["set_mcp_permission_mode_override"]
    serverName: str
    mode: str | None


class McpCall(TypedDict):
    subtype: Literal["mcp_call"]
    tool: str
    arguments: NotRequired[JSON | None]
    timeout_ms: NotRequired[int | None]


class McpMessageIn(TypedDict):
    """A message an SDK-hosted server sends on its own (a notification, typically)."""

    subtype: Literal["mcp_message"]
    server_name: str
    message: JSON


class MessageRated(TypedDict):
    subtype: Literal["message_rated"]
    messageUuid: str
    sentiment: NotRequired[str | None]
    surface: NotRequired[str | None]
    cleared: NotRequired[bool | None]


class SubmitFeedback(TypedDict):
    subtype: Literal["submit_feedback"]
    description: str
    save_locally: NotRequired[bool | None]
    attach_transcript: NotRequired[bool | None]


class EndSession(TypedDict):
    subtype: Literal["end_session"]


class GenerateSessionTitle(TypedDict):
    subtype: Literal["generate_session_title"]
    description: NotRequired[str | None]
    persist: NotRequired[bool | None]


class SideQuestion(TypedDict):
    subtype: Literal["side_question"]
    question: str
    history: NotRequired[list[Any] | None]


class McpClearAuth(TypedDict):
    subtype: Literal["mcp_clear_auth"]
    serverName: str


class McpAuthenticate(TypedDict):
    """Starts MCP's OAuth flow for a remote server (`wisp.mcp.oauth`); `redirectUri`: the
    host catches the redirect itself and hands it back (`mcp_oauth_callback_url`)."""

    subtype: Literal["mcp_authenticate"]
    serverName: str
    redirectUri: NotRequired[str | None]
    redirectUriOnly: NotRequired[bool | None]


class McpOAuthCallbackUrl(TypedDict):
    subtype: Literal["mcp_oauth_callback_url"]
    serverName: str
    callbackUrl: str


def _names_a_directory(request: Mapping[str, Any]) -> None:
    if not isinstance(request.get("path", request.get("directory")), str):
        raise InvalidRequest("Invalid add_directory request: `path` must be a string")


def _override_mode(request: Mapping[str, Any]) -> None:
    if request["mode"] not in ("default", "auto", None):
        raise InvalidRequest("Invalid set_mcp_permission_mode_override request: "
                             "`mode` must be default, auto or null")


def _mcp_tool_name(request: Mapping[str, Any]) -> None:
    if not str(request["tool"]).startswith("mcp__"):
        raise InvalidRequest("Invalid mcp_call request: `tool` must be mcp__<server>__<tool>")


GET_BINARY_VERSION: RequestType[GetBinaryVersion] = RequestType("get_binary_version")
FILE_SUGGESTIONS: RequestType[FileSuggestions] = RequestType(
    "file_suggestions", (field("query", str, required=True),))
GET_WORKSPACE_DIFF: RequestType[GetWorkspaceDiff] = RequestType("get_workspace_diff")
SEED_READ_STATE: RequestType[SeedReadState] = RequestType("seed_read_state", (
    field("path", str, required=True), field("mtime", float, required=True)))
SET_CWD: RequestType[SetCwd] = RequestType("set_cwd", (
    field("path", str, required=True), field("trust_accepted", bool, nullable=True),
    field("trusted_directory", str, nullable=True)))
RELOADS = (field("reload_claude_md", bool, nullable=True),
           field("reload_plugins", bool, nullable=True),
           field("reload_skills", bool, nullable=True))
REGISTER_REPO_ROOT: RequestType[RegisterRepoRoot] = RequestType(
    "register_repo_root", (field("directory", str, required=True), *RELOADS))
ADD_DIRECTORY: RequestType[AddDirectory] = RequestType(
    "add_directory", (field("path", str), field("directory", str)), _names_a_directory)
CANCEL_ASYNC_MESSAGE: RequestType[CancelAsyncMessage] = RequestType(
    "cancel_async_message", (field("message_uuid", str, required=True),))
BACKGROUND_TASKS: RequestType[BackgroundTasks] = RequestType(
    "background_tasks", (field("tool_use_id", str, nullable=True),))
SET_MCP_PERMISSION_MODE_OVERRIDE: RequestType[SetMcpPermissionModeOverride] = RequestType(
    "set_mcp_permission_mode_override",
    (field("serverName", str, required=True), field("mode", str, required=True, nullable=True)),
    _override_mode)
MCP_CALL: RequestType[McpCall] = RequestType("mcp_call", (
    field("tool", str, required=True), field("arguments", dict, nullable=True),
    field("timeout_ms", int, nullable=True)), _mcp_tool_name)
MCP_MESSAGE_IN: RequestType[McpMessageIn] = RequestType("mcp_message", (
    field("server_name", str, required=True), field("message", dict, required=True)))
MESSAGE_RATED: RequestType[MessageRated] = RequestType("message_rated", (
    field("messageUuid", str, required=True), field("sentiment", str, nullable=True),
    field("surface", str, nullable=True), field("cleared", bool, nullable=True)))
SUBMIT_FEEDBACK: RequestType[SubmitFeedback] = RequestType("submit_feedback", (
    field("description", str, required=True), field("save_locally", bool, nullable=True),
    field("attach_transcript", bool, nullable=True)))
END_SESSION: RequestType[EndSession] = RequestType("end_session")
GENERATE_SESSION_TITLE: RequestType[GenerateSessionTitle] = RequestType(
    "generate_session_title", (field("description", str, nullable=True),
                               field("persist", bool, nullable=True)))
SIDE_QUESTION: RequestType[SideQuestion] = RequestType("side_question", (
    field("question", str, required=True), field("history", list, nullable=True)))
MCP_CLEAR_AUTH: RequestType[McpClearAuth] = RequestType(
    "mcp_clear_auth", (field("serverName", str, required=True),))
MCP_AUTHENTICATE: RequestType[McpAuthenticate] = RequestType("mcp_authenticate", (
    field("serverName", str, required=True), field("redirectUri", str, nullable=True),
    field("redirectUriOnly", bool, nullable=True)))
MCP_OAUTH_CALLBACK_URL: RequestType[McpOAuthCallbackUrl] = RequestType(
    "mcp_oauth_callback_url", (field("serverName", str, required=True),
                               field("callbackUrl", str, required=True)))

HOST_INBOUND: dict[str, RequestType[Any]] = {t.subtype: t for t in (
    GET_BINARY_VERSION, FILE_SUGGESTIONS, GET_WORKSPACE_DIFF, SEED_READ_STATE, SET_CWD,
    REGISTER_REPO_ROOT, ADD_DIRECTORY, CANCEL_ASYNC_MESSAGE, BACKGROUND_TASKS,
    SET_MCP_PERMISSION_MODE_OVERRIDE, MCP_CALL, MCP_MESSAGE_IN, MESSAGE_RATED,
    SUBMIT_FEEDBACK, END_SESSION, GENERATE_SESSION_TITLE, SIDE_QUESTION, MCP_CLEAR_AUTH,
    MCP_AUTHENTICATE, MCP_OAUTH_CALLBACK_URL,
)}

# Subtypes seed 000 lists that wisp refuses, each with why (the error a host reads, code
# `not_available`). Every one needs a service wisp does not run: Anthropic's account login,
# its Remote Control bridge, its hosted review and channels, its file lanes.
UNAVAILABLE: dict[str, str] = {
    "set_color": "set_color is handled by the Remote Control bridge's UI, not by a "
                 "print-mode worker (seed 000: no worker branch); wisp has no session color",
    "claude_authenticate": "wisp signs in with an API key (ANTHROPIC_API_KEY or "
                           "apiKeyHelper), not a claude.ai account",
    "claude_oauth_callback": "wisp signs in with an API key, not a claude.ai account, "
                             "so there is no claude.ai OAuth flow to complete",
    "claude_oauth_wait_for_completion": "wisp signs in with an API key, not a claude.ai "
                                        "account, so there is no claude.ai OAuth flow",
    "remote_control": "Remote Control needs Anthropic's bridge service, which wisp does "
                      "not connect to",
    "poll_event": "poll_event belongs to the Remote Control bridge transport, which wisp "
                  "does not run",
    "channel_enable": "channels are delivered by Anthropic's hosted service, which wisp "
                      "does not connect to",
    "stage_file": "stage_file writes to the hosted synced-file lane, which wisp does not "
                  "have",
    "ultrareview_launch": "ultrareview runs on Anthropic's hosted review service, which "
                         "wisp does not connect to",
    "rewind_conversation": "wisp rewinds files (rewind_files), not a live conversation: "
                           "resume the session at a message instead "
                           "(--resume with --resume-session-at)",
}

# Seed 000's loop → host requests: wisp sends them (or would); a host that sends one gets
# this error, not "unsupported".
SENT_TO_HOST = ("can_use_tool", "hook_callback", "oauth_token_refresh",
                "host_auth_token_refresh", "elicitation", "request_user_dialog")
