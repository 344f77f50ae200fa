"""The API's rules for a client's answers (`user.tool_result`, `user.custom_tool_result`,
`user.tool_confirmation`): each names a call the session made that this client owns, or
it is a 400 naming the field. An answer to nothing would otherwise be logged, kept and
never used."""

from __future__ import annotations

from collections.abc import Mapping

from wisp.jsontypes import JSON
from wisp.serve.http import HttpError
from wisp.serve.shapes import ClientEvent
from wisp.serve.store.base import Store

# answer type → (the field naming the call, the event types of calls it may answer)
ANSWERED: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "user.custom_tool_result": ("custom_tool_use_id", ("agent.custom_tool_use",)),
    "user.tool_result": ("tool_use_id", ("agent.tool_use",)),
    "user.tool_confirmation": ("tool_use_id", ("agent.tool_use", "agent.mcp_tool_use")),
}


def check(store: Store, session_id: str, environment: JSON | None,
          events: list[ClientEvent]) -> None:
    """`user.tool_result` answers a toolset call a client ran: only a self-hosted
    session's are (a cloud session runs them here). Every answer names a call of the
    session of the kind it answers."""
    self_hosted = ((environment or {}).get("config") or {}).get("type") == "self_hosted"
    for index, event in enumerate(events):
        if event["type"] == "user.tool_result" and not self_hosted:
            raise HttpError(400, "invalid_request_error",
                            f"events[{index}]: user.tool_result is only accepted by a session "
                            "in a self_hosted environment (a cloud session runs its tools)")
        if event["type"] == "user.custom_tool_result":
            target = event["custom_tool_use_id"]
        elif event["type"] in ("user.tool_result", "user.tool_confirmation"):
            target = event["tool_use_id"]
        else:
            continue
        field, calls = ANSWERED[event["type"]]
        found = store.event(session_id, target) if target else None
        if found is None or found.get("type") not in calls:
            raise HttpError(400, "invalid_request_error",
                            f"events[{index}].{field}: {target!r} is not a "
                            f"{' or '.join(calls)} event of this session")
