"""The control requests wisp sends (wisp → client), and the answers it reads: one
`TypedDict` each. Re-exported by `wisp.wire.protocol`.
"""

from typing import Literal, NotRequired, TypedDict

from wisp.jsontypes import JSON


class CanUseTool(TypedDict):
    """Asks the host whether a tool call may run (only with `--permission-prompt-tool
    stdio`)."""

    subtype: Literal["can_use_tool"]
    tool_name: str
    display_name: str
    input: JSON
    description: str
    permission_suggestions: list[JSON]
    decision_reason_type: str
    tool_use_id: str
    decision_reason: NotRequired[str]
    blocked_path: NotRequired[str]
    requires_user_interaction: NotRequired[bool]


class PermissionAnswer(TypedDict, total=False):
    """The host's answer to `can_use_tool`. Allow: `updatedInput` (absent means the input
    as asked) and `updatedPermissions`. Deny: `message`, and `interrupt` to end the turn."""

    behavior: Literal["allow", "deny"]
    updatedInput: JSON
    updatedPermissions: list[JSON]
    message: str
    interrupt: bool


class HookCallback(TypedDict):
    """Runs an SDK hook; the answer is the hook's output (`wisp.hooks.model.HookOutput`)."""

    subtype: Literal["hook_callback"]
    callback_id: str
    input: JSON
    tool_use_id: str


class McpMessage(TypedDict):
    """One JSON-RPC message for an MCP server that lives in the SDK process."""

    subtype: Literal["mcp_message"]
    server_name: str
    message: JSON


class McpMessageAnswer(TypedDict, total=False):
    mcp_response: JSON


class Elicitation(TypedDict):
    """An MCP server asks the user mid-call (`elicitation/create`): a form (`requested_schema`,
    fields in `property_order`) or a page to open (`mode: "url"`); answered as MCP's."""

    subtype: Literal["elicitation"]
    mcp_server_name: str
    message: str
    mode: NotRequired[Literal["form", "url"]]
    url: NotRequired[str]
    elicitation_id: NotRequired[str]
    requested_schema: NotRequired[JSON]
    property_order: NotRequired[list[str]]


OutboundRequest = CanUseTool | HookCallback | McpMessage | Elicitation
