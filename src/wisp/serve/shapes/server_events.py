"""Server events: one builder per event type the server emits (`agent_message`,
`status_idle`, `model_request_start`, ...) and the `event_deltas` previews, so no other
module writes an event dict by hand."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import new_id, read_choice, timestamp
from wisp.serve.shapes.event_types import (
    AgentCustomToolUseEvent,
    AgentMcpToolResultEvent,
    AgentMcpToolUseEvent,
    AgentMessageEvent,
    AgentThinkingEvent,
    AgentThreadContextCompactedEvent,
    AgentToolResultEvent,
    AgentToolUseEvent,
    EventDeltaPreview,
    EventStartPreview,
    ModelUsage,
    Permission,
    PreviewedKind,
    RetryStatus,
    SessionDeletedEvent,
    SessionErrorEvent,
    SessionErrorObject,
    SessionStatusIdleEvent,
    SessionStatusRescheduledEvent,
    SessionStatusRunningEvent,
    SessionStatusTerminatedEvent,
    SessionUpdatedEvent,
    SessionUsageEvent,
    SpanModelRequestEndEvent,
    SpanModelRequestStartEvent,
    StopReason,
    TextFragment,
    ToolEvaluation,
)

STOP_REASONS: Final = ("end_turn", "requires_action", "retries_exhausted", "budget_reached",
                       "refusal")


SESSION_ERROR_TYPES: Final = (
    "unknown_error", "model_overloaded_error", "model_rate_limited_error",
    "model_request_failed_error", "mcp_connection_failed_error",
    "mcp_authentication_failed_error", "billing_error", "credential_host_unreachable_error",
    "tool_use_limit_reached_error", "compaction_limit_reached_error",
    "repository_authentication_error", "repository_forbidden_error",
    "repository_not_found_error", "repository_checkout_error", "repository_clone_error")


def _id(event_id: str | None) -> str:
    return event_id or new_id("sevt")


# Each builder writes its event as a literal in one key order (id, type, its fields,
# processed_at): the order the JSON on the wire has always had.


def _content(content: str | Sequence[JSON]) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(block) for block in content]


def agent_message(content: str | Sequence[JSON], *,
                  event_id: str | None = None) -> AgentMessageEvent:
    """`agent.message`: text blocks (a string is one). `event_id` is the id an
    `event_start` preview announced."""
    return {"id": _id(event_id), "type": "agent.message", "content": _content(content),
            "processed_at": timestamp()}


def agent_thinking(*, event_id: str | None = None) -> AgentThinkingEvent:
    """`agent.thinking`: a progress signal only; it carries no thinking text."""
    return {"id": _id(event_id), "type": "agent.thinking", "processed_at": timestamp()}


def _evaluation(policy: str | None, permission: Permission,
                reason_code: str) -> ToolEvaluation | None:
    if policy is None:
        return None  # refused before any policy applied (e.g. the tool is disabled)
    if policy != "auto":
        # always_allow or always_ask: the policies `agent_tools.POLICIES` admits
        return cast(ToolEvaluation, {"type": policy})
    if permission == "allow":
        return {"type": "auto", "evaluated_permission": {"type": permission}}
    return {"type": "auto",
            "evaluated_permission": {"type": permission, "reason_code": reason_code}}


_PERMISSIONS: Final[Mapping[str, Permission]] = {"allow": "allow", "ask": "ask",
                                                 "deny": "deny"}
_PERMISSION_OF: Final[Mapping[str, Permission]] = {"always_allow": "allow",
                                                   "always_ask": "ask"}


def _permission(policy: str | None, permission: str | None) -> Permission:
    chosen = (_PERMISSIONS.get(permission) if permission
              else _PERMISSION_OF.get(policy or ""))
    if chosen is not None:
        return chosen
    raise ValueError("a tool call under the auto policy (or no policy) needs a permission")


def agent_tool_use(name: str, tool_input: Mapping[str, Any], *,
                   policy: str | None = "always_allow", permission: str | None = None,
                   reason_code: str = "policy") -> AgentToolUseEvent:
    """`agent.tool_use` (a built-in tool). `evaluated_permission` follows `policy`
    (always_allow: allow, always_ask: ask) unless `permission` says otherwise; the SDK's
    tool runner holds an `ask` call until its `user.tool_confirmation`. Its id is the
    `tool_use_id` the result and the confirmation name."""
    verdict = _permission(policy, permission)
    event: AgentToolUseEvent = {
        "id": _id(None), "type": "agent.tool_use", "name": name, "input": dict(tool_input),
        "evaluated_permission": verdict, "processed_at": timestamp()}
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_tool_result(tool_use_id: str, content: str | Sequence[JSON], *,
                      is_error: bool = False) -> AgentToolResultEvent:
    """`agent.tool_result`: the result of a built-in tool the server ran itself."""
    return {"id": _id(None), "type": "agent.tool_result", "tool_use_id": tool_use_id,
            "content": _content(content), "is_error": is_error, "processed_at": timestamp()}


def agent_custom_tool_use(name: str, tool_input: Mapping[str, Any]) -> AgentCustomToolUseEvent:
    """`agent.custom_tool_use`: the client answers with `user.custom_tool_result` naming
    this event's id as `custom_tool_use_id`."""
    return {"id": _id(None), "type": "agent.custom_tool_use", "name": name,
            "input": dict(tool_input), "processed_at": timestamp()}


def agent_mcp_tool_use(mcp_server_name: str, name: str, tool_input: Mapping[str, Any], *,
                       policy: str | None = "always_ask", permission: str | None = None,
                       reason_code: str = "policy") -> AgentMcpToolUseEvent:
    """`agent.mcp_tool_use`: a tool of an MCP server the server calls itself."""
    verdict = _permission(policy, permission)
    event: AgentMcpToolUseEvent = {
        "id": _id(None), "type": "agent.mcp_tool_use", "mcp_server_name": mcp_server_name,
        "name": name, "input": dict(tool_input), "evaluated_permission": verdict,
        "processed_at": timestamp()}
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_mcp_tool_result(mcp_tool_use_id: str, content: str | Sequence[JSON], *,
                          is_error: bool = False) -> AgentMcpToolResultEvent:
    """`agent.mcp_tool_result`."""
    return {"id": _id(None), "type": "agent.mcp_tool_result",
            "mcp_tool_use_id": mcp_tool_use_id, "content": _content(content),
            "is_error": is_error, "processed_at": timestamp()}


def agent_context_compacted() -> AgentThreadContextCompactedEvent:
    """`agent.thread_context_compacted`: the conversation was summarised."""
    return {"id": _id(None), "type": "agent.thread_context_compacted",
            "processed_at": timestamp()}


def status_running() -> SessionStatusRunningEvent:
    """`session.status_running`."""
    return {"id": _id(None), "type": "session.status_running", "processed_at": timestamp()}


def stop_reason_of(stop_reason: str, event_ids: Sequence[str] = ()) -> StopReason:
    """The `stop_reason` object of a `session.status_idle`: `requires_action` names the
    events the session waits on, the others are their type alone."""
    reason = read_choice(stop_reason, "stop_reason", STOP_REASONS)
    if reason == "requires_action":
        if not event_ids:
            raise ValueError("requires_action names the events it waits on")
        return {"type": "requires_action", "event_ids": list(event_ids)}
    # one of the other four (checked just above); mypy cannot narrow a str to a Literal
    return cast(StopReason, {"type": reason})


def status_idle(stop_reason: str = "end_turn", *, event_ids: Sequence[str] = (),
                stop_details: JSON | None = None) -> SessionStatusIdleEvent:
    """`session.status_idle`. `requires_action` names the events the session waits on
    (tool calls awaiting a result or a confirmation); only it keeps the turn open for the
    SDK's tool runner. A `refusal` may say more in `stop_details`."""
    reason = stop_reason_of(stop_reason, event_ids)
    if stop_details is not None:
        return {"id": _id(None), "type": "session.status_idle", "stop_reason": reason,
                "stop_details": copy.deepcopy(stop_details), "processed_at": timestamp()}
    return {"id": _id(None), "type": "session.status_idle", "stop_reason": reason,
            "processed_at": timestamp()}


def status_rescheduled() -> SessionStatusRescheduledEvent:
    """`session.status_rescheduled`: a transient failure; the session retries."""
    return {"id": _id(None), "type": "session.status_rescheduled",
            "processed_at": timestamp()}


def status_terminated() -> SessionStatusTerminatedEvent:
    """`session.status_terminated`: the end, whether by error or by completion."""
    return {"id": _id(None), "type": "session.status_terminated",
            "processed_at": timestamp()}


def session_deleted_event() -> SessionDeletedEvent:
    """`session.deleted`: the last event a stream of a deleted session carries."""
    return {"id": _id(None), "type": "session.deleted", "processed_at": timestamp()}


def session_updated_event(changes: Mapping[str, Any]) -> SessionUpdatedEvent:
    """`session.updated`, carrying the changed fields among agent, budget, metadata and
    title (a removed budget is `budget: null`)."""
    fields = {k: copy.deepcopy(v) for k, v in changes.items()
              if k in ("agent", "budget", "metadata", "title")}
    # The changed fields sit between `type` and `processed_at`, in the caller's order;
    # the keys are those SessionUpdatedEvent declares, filtered just above.
    return cast(SessionUpdatedEvent, {"id": _id(None), "type": "session.updated", **fields,
                                      "processed_at": timestamp()})


def _error_object(kind: str, message: str, retry_status: RetryStatus,
                  mcp_server_name: str | None, repository_url: str | None
                  ) -> SessionErrorObject:
    error: SessionErrorObject = {"type": kind, "message": message,
                                 "retry_status": {"type": retry_status}}
    if kind.startswith("mcp_"):
        if mcp_server_name is None:
            raise ValueError(f"{kind} names its MCP server")
        error["mcp_server_name"] = mcp_server_name
    if kind.startswith("repository_"):
        error["repository_url"] = repository_url
    return error


def session_error(kind: str, message: str, *, retry_status: str = "terminal",
                  mcp_server_name: str | None = None,
                  repository_url: str | None = None) -> SessionErrorEvent:
    """`session.error`. `retry_status` says what happens next: `retrying`, `exhausted` or
    `terminal`. The MCP errors name their server."""
    read_choice(kind, "kind", SESSION_ERROR_TYPES)
    retry = cast(RetryStatus, read_choice(retry_status, "retry_status",
                                      ("retrying", "exhausted", "terminal")))
    error = _error_object(kind, message, retry, mcp_server_name, repository_url)
    return {"id": _id(None), "type": "session.error", "error": error,
            "processed_at": timestamp()}


def session_usage(usage: Mapping[str, Any], budget: JSON | None = None) -> SessionUsageEvent:
    """`session.usage`: the session's cumulative usage (its document's `usage`)."""
    return {"id": _id(None), "type": "session.usage", "usage": copy.deepcopy(dict(usage)),
            "budget": copy.deepcopy(budget), "processed_at": timestamp()}


def model_request_start() -> SpanModelRequestStartEvent:
    """`span.model_request_start`; its id is the `model_request_start_id` of the end."""
    return {"id": _id(None), "type": "span.model_request_start", "processed_at": timestamp()}


def model_usage(usage: Mapping[str, Any] | None) -> ModelUsage:
    """Usage in the Messages API's names, as spans carry it (missing counts are 0)."""
    usage = usage or {}
    return {"input_tokens": int(usage.get("input_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cache_read_input_tokens": int(usage.get("cache_read_input_tokens") or 0),
            "cache_creation_input_tokens": int(usage.get("cache_creation_input_tokens") or 0)}


def model_request_end(model_request_start_id: str, usage: Mapping[str, Any] | None = None,
                      *, is_error: bool = False) -> SpanModelRequestEndEvent:
    """`span.model_request_end`, with the request's usage in Messages API names."""
    counts = model_usage(usage)
    speed = (usage or {}).get("speed")
    if speed in ("standard", "fast"):
        counts["speed"] = speed
    return {"id": _id(None), "type": "span.model_request_end",
            "model_request_start_id": model_request_start_id, "model_usage": counts,
            "is_error": is_error, "processed_at": timestamp()}


def event_start(event_id: str, kind: str = "agent.message") -> EventStartPreview:
    """A preview's opening (`event_deltas` streams only; never in the log): the id the
    buffered `agent.message`/`agent.thinking` will carry."""
    previewed = cast(PreviewedKind, read_choice(kind, "kind", ("agent.message",
                                                            "agent.thinking")))
    return {"type": "event_start", "event": {"id": event_id, "type": previewed}}


def event_delta(event_id: str, text: str, *, index: int | None = 0) -> EventDeltaPreview:
    """A fragment of a previewed `agent.message`: text appended to its content[index]."""
    fragment: TextFragment = {"type": "text", "text": text}
    if index is not None:
        return {"type": "event_delta", "event_id": event_id,
                "delta": {"type": "content_delta", "content": fragment, "index": index}}
    return {"type": "event_delta", "event_id": event_id,
            "delta": {"type": "content_delta", "content": fragment}}
