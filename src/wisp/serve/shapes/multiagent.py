"""Multi-agent sessions: an agent's `multiagent` (only the `coordinator` topology), the
session threads (`BetaManagedAgentsSessionThread`) and the thread events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    ShapeError,
    child_path,
    new_id,
    read_choice,
    read_int,
    read_list,
    read_object,
    read_str,
    required_field,
    timestamp,
)
from wisp.serve.shapes.documents import SessionAgent, ThreadDocument
from wisp.serve.shapes.event_types import (
    AgentThreadMessageReceivedEvent,
    AgentThreadMessageSentEvent,
    SessionThreadCreatedEvent,
    SessionThreadStatusIdleEvent,
    SessionThreadStatusRunningEvent,
)

THREAD_STATUSES: Final = ("running", "idle", "rescheduling", "terminated")


def _roster_entry(value: object, path: str) -> JSON:
    """An agent id or `{"type": "agent", "id", "version"?}`, as {"type": "agent", "id",
    "version" (None: latest)}; `self` and advisors are refused (not supported here)."""
    if isinstance(value, str):
        return {"type": "agent", "id": read_str(value, path, empty=False), "version": None}
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), ("agent", "self", "advisor"))
    if kind != "agent":
        raise ShapeError(child_path(path, "type"), f"{kind} roster entries are not supported by "
                         "this server")
    version = obj.get("version")
    return {"type": "agent",
            "id": read_str(required_field(obj, "id", path), child_path(path, "id"), empty=False),
            "version": (None if version is None
                        else read_int(version, child_path(path, "version"), 1))}


def multiagent(value: object, path: str) -> JSON:
    """`{"type": "coordinator", "agents": [1 to 20 entries]}`, entries unresolved."""
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("coordinator",))
    entries = read_list(required_field(obj, "agents", path), child_path(path, "agents"))
    if not 1 <= len(entries) <= 20:
        raise ShapeError(child_path(path, "agents"), "expected 1 to 20 agents")
    return {"type": "coordinator", "agents": [
        _roster_entry(e, f"{child_path(path, 'agents')}[{i}]") for i, e in enumerate(entries)]}


def thread_document(session_id: str, agent: SessionAgent,
                    parent: str | None) -> ThreadDocument:
    now = timestamp()
    return {"id": new_id("sthr"), "type": "session_thread", "session_id": session_id,
            "agent": agent, "parent_thread_id": parent, "status": "idle",
            "created_at": now, "updated_at": now, "archived_at": None,
            "stats": None, "usage": None, "workflow_run_id": None}


def thread_created(thread_id: str, agent_name: str) -> SessionThreadCreatedEvent:
    return {"id": new_id("sevt"), "type": "session.thread_created",
            "session_thread_id": thread_id, "agent_name": agent_name,
            "processed_at": timestamp()}


def thread_status(thread_id: str, agent_name: str, status: str
                  ) -> SessionThreadStatusRunningEvent | SessionThreadStatusIdleEvent:
    """`session.thread_status_running`, or `_idle` (end_turn)."""
    if status == "idle":
        return {"id": new_id("sevt"), "type": "session.thread_status_idle",
                "session_thread_id": thread_id, "agent_name": agent_name,
                "stop_reason": {"type": "end_turn"}, "processed_at": timestamp()}
    read_choice(status, "status", ("running", "idle"))  # a thread is set running or idle only
    return {"id": new_id("sevt"), "type": "session.thread_status_running",
            "session_thread_id": thread_id, "agent_name": agent_name,
            "processed_at": timestamp()}


def _text(text: str) -> list[JSON]:
    return [{"type": "text", "text": text}]


def message_sent(thread_id: str, agent_name: str, text: str) -> AgentThreadMessageSentEvent:
    return {"id": new_id("sevt"), "type": "agent.thread_message_sent",
            "to_session_thread_id": thread_id, "to_agent_name": agent_name,
            "content": _text(text), "processed_at": timestamp()}


def message_received(thread_id: str, agent_name: str | None,
                     text: str) -> AgentThreadMessageReceivedEvent:
    return {"id": new_id("sevt"), "type": "agent.thread_message_received",
            "from_session_thread_id": thread_id, "from_agent_name": agent_name,
            "content": _text(text), "processed_at": timestamp()}


def threads_query_statuses(values: Sequence[str]) -> list[str]:
    return [read_choice(v, "statuses", THREAD_STATUSES) for v in values]
