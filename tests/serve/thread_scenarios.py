"""A coordinator agent delegating to the agent of its roster through the official SDK,
on whichever store the service runs (SQLite here, PostgreSQL in tests/serve/pg)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.serve.harness import anthropic, user_message, wait_for
from tests.serve.memory_scenarios import strict
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def ended(count: int) -> Any:
    def done(events: list[JSON]) -> bool:
        return sum(e["type"] == "session.status_idle"
                   and e["stop_reason"]["type"] == "end_turn" for e in events) >= count
    return done


def texts(events: list[Any], kind: str = "agent.message") -> list[str]:
    return ["".join(b.text for b in e.content) for e in events if e.type == kind]


def coordinator_delegates(server: ScriptedServer, client: Any) -> None:
    agents = client.beta.agents
    helper = agents.create(name="researcher", model="claude-sonnet-4-5",
                           description="finds facts", system="You research.",
                           tools=[{"type": "agent_toolset_20260401"}])
    lead = agents.create(name="lead", model="claude-sonnet-4-5",
                         multiagent={"type": "coordinator", "agents": [helper.id]})
    strict(lead)
    assert [(a.id, a.version) for a in lead.multiagent.agents] == [(helper.id, 1)]
    with pytest.raises(anthropic.BadRequestError, match=r"multiagent.agents\[0\]"):
        agents.create(name="bad", model="claude-sonnet-4-5",
                      multiagent={"type": "coordinator", "agents": ["agent_missing"]})
    with pytest.raises(anthropic.BadRequestError, match="self"):
        agents.create(name="bad", model="claude-sonnet-4-5",
                      multiagent={"type": "coordinator", "agents": [{"type": "self"}]})
    environment = client.beta.environments.create(name="env", config={"type": "cloud"})
    asker = agents.create(name="asker", model="claude-sonnet-4-5", tools=[
        {"type": "custom", "name": "approve", "description": "ask a human",
         "input_schema": {"type": "object"}}])
    waits = agents.create(name="waits", model="claude-sonnet-4-5",
                          multiagent={"type": "coordinator", "agents": [asker.id]})
    with pytest.raises(anthropic.BadRequestError, match="approve"):
        client.beta.sessions.create(agent=waits.id, environment_id=environment.id)
    session = client.beta.sessions.create(agent=lead.id, environment_id=environment.id)
    strict(session)
    [roster] = session.agent.multiagent.agents
    assert (roster.name, roster.system, roster.version) == ("researcher", "You research.", 1)

    server.script(
        reply.tool_use("delegate_to_agent", {"agent": "researcher", "message": "find X"}),
        reply.text("X is 42"), reply.text("The answer is 42"))
    client.beta.sessions.events.send(session.id, events=[user_message("what is X?")])
    wait_for(client, session.id, ended(1))
    events = list(client.beta.sessions.events.list(session.id))
    strict(events)
    kinds = [e.type for e in events]
    for kind in ("session.thread_created", "agent.thread_message_sent",
                 "session.thread_status_running", "agent.thread_message_received",
                 "session.thread_status_idle"):
        assert kind in kinds, kinds
    assert kinds.index("agent.thread_message_sent") < kinds.index(
        "agent.thread_message_received")
    assert texts(events) == ["The answer is 42"]  # the delegate's message stays in its thread
    assert texts(events, "agent.thread_message_received") == ["X is 42"]
    [result] = [e for e in events if e.type == "agent.tool_result"]
    assert "X is 42" in str(result.content) and not result.is_error

    [thread] = list(client.beta.sessions.threads.list(session.id))
    strict(thread)
    assert (thread.agent.name, thread.status, thread.session_id) == ("researcher", "idle",
                                                                     session.id)
    created = next(e for e in events if e.type == "session.thread_created")
    assert created.session_thread_id == thread.id and created.agent_name == "researcher"
    own = list(client.beta.sessions.threads.events.list(thread.id, session_id=session.id))
    strict(own)
    assert texts(own) == ["X is 42"]
    assert texts(own, "agent.thread_message_received") == ["find X"]

    requests = [r.body for r in server.requests if r.body and r.body.get("messages")]
    lead_tools = {t["name"] for t in requests[0].get("tools") or []}
    child_tools = {t["name"] for t in requests[1].get("tools") or []}
    assert "delegate_to_agent" in lead_tools and "delegate_to_agent" not in child_tools
    assert "You research." in str(requests[1].get("system"))

    server.script(
        reply.tool_use("delegate_to_agent", {"agent": "researcher", "message": "and Y?"}),
        reply.text("Y is 7"), reply.text("done"))
    with client.beta.sessions.threads.events.stream(thread.id,
                                                    session_id=session.id) as stream:
        client.beta.sessions.events.send(session.id, events=[user_message("and Y?")])
        seen = []
        for event in stream:
            seen.append(event.type)
            if event.type == "agent.message":
                assert texts([event]) == ["Y is 7"]
                break
    assert seen[0] == "agent.thread_message_received"
    wait_for(client, session.id, ended(2))
    child_second = [r.body for r in server.requests if r.body and r.body.get("messages")][4]
    assert "find X" in str(child_second["messages"])  # the thread kept its conversation
    assert len(list(client.beta.sessions.threads.list(session.id))) == 1
    assert list(client.beta.sessions.threads.list(session.id, statuses=["running"])) == []
    archived = client.beta.sessions.threads.archive(thread.id, session_id=session.id)
    assert archived.archived_at is not None
    assert client.beta.sessions.threads.retrieve(
        thread.id, session_id=session.id).archived_at is not None
