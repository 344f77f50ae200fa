"""`wisp serve --store postgresql://…`: the same service on PostgreSQL, driven by the
official SDK — a turn to `end_turn`, and a custom tool's wait across a `kill -9`."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import Served, cloud_setup, idle_end_turn, types, user_message, wait_for
from wisp.testing import ScriptedServer, reply

CUSTOM = {"type": "custom", "name": "approve", "description": "Ask a human",
          "input_schema": {"type": "object", "properties": {"what": {"type": "string"}}}}


def test_a_turn_and_a_crash_on_postgres(tmp_path: Path, server: ScriptedServer,
                                        dsn: str) -> None:
    server.script(reply.text("hello from postgres"),
                  reply.tool_use("approve", {"what": "deploy"}), reply.text("deployed"))
    served = Served(tmp_path, server, store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[CUSTOM])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        events = wait_for(client, session.id, idle_end_turn)
        assert any(e["type"] == "agent.message" for e in events)
        client.beta.sessions.events.send(session.id, events=[user_message("deploy?")])
        events = wait_for(client, session.id, lambda es: "agent.custom_tool_use" in types(es)
                          and types(es)[-1] == "session.status_idle")
        use = next(e for e in events if e["type"] == "agent.custom_tool_use")
        served.kill()
        served = Served(tmp_path, server, store=dsn).start()
        client = served.client()
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
            "content": [{"type": "text", "text": "approved"}]}])
        events = wait_for(client, session.id, lambda es: sum(
            e["type"] == "session.status_idle"
            and e["stop_reason"]["type"] == "end_turn" for e in es) >= 2)
    finally:
        served.stop()
    texts = [e["content"][0]["text"] for e in events if e["type"] == "agent.message"]
    assert texts == ["hello from postgres", "deployed"]
    assert len({e["id"] for e in events}) == len(events)
