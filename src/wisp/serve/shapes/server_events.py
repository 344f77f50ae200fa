"""Server events: one builder per event type the server emits (`agent_message`,
`status_idle`, `model_request_start`, ...) and the `event_deltas` previews, so no other
module writes an event dict by hand."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import new_id, read_choice, timestamp

STOP_REASONS: Final = ("end_turn", "requires_action", "retries_exhausted", "budget_reached",
                       "refusal")


SESSION_ERROR_TYPES: Final = (
    "unknown_error", "model_overloaded_error", "model_rate_limited_error",
    "model_request_failed_error", "mcp_connection_failed_error",
    "mcp_authentication_failed_error", "billing_error", "credential_host_unreachable_error",
    "tool_use_limit_reached_error", "compaction_limit_reached_error",
    "repository_authentication_error", "repository_forbidden_error",
    "repository_not_found_error", "repository_checkout_error", "repository_clone_error")


def _event(kind: str, event_id: str | None = None, **fields: Any) -> JSON:
    return {"id": event_id or new_id("sevt"), "type": kind, **fields,
            "processed_at": timestamp()}


def _content(content: str | Sequence[JSON]) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(block) for block in content]


def agent_message(content: str | Sequence[JSON], *, event_id: str | None = None) -> JSON:
    """`agent.message`: text blocks (a string is one). `event_id` is the id an
    `event_start` preview announced."""
    return _event("agent.message", event_id, content=_content(content))


def agent_thinking(*, event_id: str | None = None) -> JSON:
    """`agent.thinking`: a progress signal only; it carries no thinking text."""
    return _event("agent.thinking", event_id)


def _evaluation(policy: str | None, permission: str, reason_code: str) -> JSON | None:
    if policy is None:
        return None  # refused before any policy applied (e.g. the tool is disabled)
    if policy != "auto":
        return {"type": policy}
    verdict: JSON = {"type": permission}
    if permission != "allow":
        verdict["reason_code"] = reason_code
    return {"type": "auto", "evaluated_permission": verdict}


_PERMISSION_OF: Final = {"always_allow": "allow", "always_ask": "ask"}


def _permission(policy: str | None, permission: str | None) -> str:
    chosen = permission or _PERMISSION_OF.get(policy or "")
    if chosen not in ("allow", "ask", "deny"):
        raise ValueError("a tool call under the auto policy (or no policy) needs a permission")
    return chosen


def agent_tool_use(name: str, tool_input: Mapping[str, Any], *,
                   policy: str | None = "always_allow", permission: str | None = None,
                   reason_code: str = "policy") -> JSON:
    """`agent.tool_use` (a built-in tool). `evaluated_permission` follows `policy`
    (always_allow: allow, always_ask: ask) unless `permission` says otherwise; the SDK's
    tool runner holds an `ask` call until its `user.tool_confirmation`. Its id is the
    `tool_use_id` the result and the confirmation name."""
    verdict = _permission(policy, permission)
    event = _event("agent.tool_use", name=name, input=dict(tool_input),
                   evaluated_permission=verdict)
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_tool_result(tool_use_id: str, content: str | Sequence[JSON], *,
                      is_error: bool = False) -> JSON:
    """`agent.tool_result`: the result of a built-in tool the server ran itself."""
    return _event("agent.tool_result", tool_use_id=tool_use_id, content=_content(content),
                  is_error=is_error)


def agent_custom_tool_use(name: str, tool_input: Mapping[str, Any]) -> JSON:
    """`agent.custom_tool_use`: the client answers with `user.custom_tool_result` naming
    this event's id as `custom_tool_use_id`."""
    return _event("agent.custom_tool_use", name=name, input=dict(tool_input))


def agent_mcp_tool_use(mcp_server_name: str, name: str, tool_input: Mapping[str, Any], *,
                       policy: str | None = "always_ask", permission: str | None = None,
                       reason_code: str = "policy") -> JSON:
    """`agent.mcp_tool_use`: a tool of an MCP server the server calls itself."""
    verdict = _permission(policy, permission)
    event = _event("agent.mcp_tool_use", mcp_server_name=mcp_server_name, name=name,
                   input=dict(tool_input), evaluated_permission=verdict)
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_mcp_tool_result(mcp_tool_use_id: str, content: str | Sequence[JSON], *,
                          is_error: bool = False) -> JSON:
    """`agent.mcp_tool_result`."""
    return _event("agent.mcp_tool_result", mcp_tool_use_id=mcp_tool_use_id,
                  content=_content(content), is_error=is_error)


def agent_context_compacted() -> JSON:
    """`agent.thread_context_compacted`: the conversation was summarised."""
    return _event("agent.thread_context_compacted")


def status_running() -> JSON:
    """`session.status_running`."""
    return _event("session.status_running")


def status_idle(stop_reason: str = "end_turn", *, event_ids: Sequence[str] = (),
                stop_details: JSON | None = None) -> JSON:
    """`session.status_idle`. `requires_action` names the events the session waits on
    (tool calls awaiting a result or a confirmation); only it keeps the turn open for the
    SDK's tool runner. A `refusal` may say more in `stop_details`."""
    read_choice(stop_reason, "stop_reason", STOP_REASONS)
    reason: JSON = {"type": stop_reason}
    if stop_reason == "requires_action":
        if not event_ids:
            raise ValueError("requires_action names the events it waits on")
        reason["event_ids"] = list(event_ids)
    if stop_details is not None:
        return _event("session.status_idle", stop_reason=reason,
                      stop_details=copy.deepcopy(stop_details))
    return _event("session.status_idle", stop_reason=reason)


def status_rescheduled() -> JSON:
    """`session.status_rescheduled`: a transient failure; the session retries."""
    return _event("session.status_rescheduled")


def status_terminated() -> JSON:
    """`session.status_terminated`: the end, whether by error or by completion."""
    return _event("session.status_terminated")


def session_deleted_event() -> JSON:
    """`session.deleted`: the last event a stream of a deleted session carries."""
    return _event("session.deleted")


def session_updated_event(changes: Mapping[str, Any]) -> JSON:
    """`session.updated`, carrying the changed fields among agent, budget, metadata and
    title (a removed budget is `budget: null`)."""
    fields = {k: copy.deepcopy(v) for k, v in changes.items()
              if k in ("agent", "budget", "metadata", "title")}
    return _event("session.updated", **fields)


def session_error(kind: str, message: str, *, retry_status: str = "terminal",
                  mcp_server_name: str | None = None,
                  repository_url: str | None = None) -> JSON:
    """`session.error`. `retry_status` says what happens next: `retrying`, `exhausted` or
    `terminal`. The MCP errors name their server."""
    read_choice(kind, "kind", SESSION_ERROR_TYPES)
    read_choice(retry_status, "retry_status", ("retrying", "exhausted", "terminal"))
    error: JSON = {"type": kind, "message": message, "retry_status": {"type": retry_status}}
    if kind.startswith("mcp_"):
        if mcp_server_name is None:
            raise ValueError(f"{kind} names its MCP server")
        error["mcp_server_name"] = mcp_server_name
    if kind.startswith("repository_"):
        error["repository_url"] = repository_url
    return _event("session.error", error=error)


def session_usage(usage: Mapping[str, Any], budget: JSON | None = None) -> JSON:
    """`session.usage`: the session's cumulative usage (its document's `usage`)."""
    return _event("session.usage", usage=copy.deepcopy(dict(usage)),
                  budget=copy.deepcopy(budget))


def model_request_start() -> JSON:
    """`span.model_request_start`; its id is the `model_request_start_id` of the end."""
    return _event("span.model_request_start")


def model_request_end(model_request_start_id: str, usage: Mapping[str, Any] | None = None,
                      *, is_error: bool = False) -> JSON:
    """`span.model_request_end`, with the request's usage in Messages API names."""
    usage = usage or {}
    model_usage = {key: int(usage.get(key) or 0)
                   for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                               "cache_creation_input_tokens")}
    if usage.get("speed") in ("standard", "fast"):
        model_usage["speed"] = usage["speed"]
    return _event("span.model_request_end", model_request_start_id=model_request_start_id,
                  model_usage=model_usage, is_error=is_error)


def event_start(event_id: str, kind: str = "agent.message") -> JSON:
    """A preview's opening (`event_deltas` streams only; never in the log): the id the
    buffered `agent.message`/`agent.thinking` will carry."""
    read_choice(kind, "kind", ("agent.message", "agent.thinking"))
    return {"type": "event_start", "event": {"id": event_id, "type": kind}}


def event_delta(event_id: str, text: str, *, index: int | None = 0) -> JSON:
    """A fragment of a previewed `agent.message`: text appended to its content[index]."""
    delta: JSON = {"type": "content_delta", "content": {"type": "text", "text": text}}
    if index is not None:
        delta["index"] = index
    return {"type": "event_delta", "event_id": event_id, "delta": delta}
