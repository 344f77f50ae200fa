"""`sessions.update(agent=...)` takes effect at the session's next turn: the model is
offered the tools the session's agent has now, not those it had when its runtime was
first opened (a worker keeps a session's runtime between turns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.serve.harness import cloud_setup, serving, user_message, wait_for
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def custom(name: str) -> JSON:
    return {"type": "custom", "name": name, "description": f"the {name} tool",
            "input_schema": {"type": "object", "properties": {}}}


def turns_ended(count: int) -> Any:
    return lambda events: sum(
        e["type"] == "session.status_idle" and e["stop_reason"]["type"] == "end_turn"
        for e in events) >= count


def offered(body: JSON) -> list[str]:
    return sorted(str(tool["name"]) for tool in body.get("tools") or [])


def test_the_next_turn_is_offered_the_tools_the_session_was_updated_to(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("first"), reply.text("second"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[custom("lookup")])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("one")])
        wait_for(client, session.id, turns_ended(1))
        client.beta.sessions.update(session.id, agent={"tools": [custom("lookup"),
                                                                 custom("translate")]})
        client.beta.sessions.events.send(session.id, events=[user_message("two")])
        wait_for(client, session.id, turns_ended(2))
    first, second = server.requests
    assert offered(first.body) == ["lookup"]
    assert offered(second.body) == ["lookup", "translate"]
    # The conversation carried over into the new runtime.
    texts = [m["content"] for m in second.body["messages"] if m["role"] == "user"]
    assert len(texts) == 2
