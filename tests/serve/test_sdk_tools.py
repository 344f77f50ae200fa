"""Tool calls of served sessions, driven by the official `anthropic` SDK: a custom tool
answered through `events.tool_runner`, Bash in a `cloud` environment, the same in a
`self_hosted` one through the SDK's runner and `beta_agent_toolset_20260401`, `always_ask`
confirmation allowed and denied, and `user.interrupt` during a slow answer."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from tests.serve.harness import (
    cloud_setup,
    idle_end_turn,
    serving,
    types,
    user_message,
    wait_for,
)
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def tool_results(body: JSON) -> list[JSON]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def text_of(block: JSON) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [])


async def run_runner(client: Any, session_id: str, tools: list[Any], done: threading.Event
                     ) -> list[Any]:
    """Runs the SDK's tool runner until the session idles with end_turn."""
    calls = []
    runner = client.beta.sessions.events.tool_runner(session_id, tools=tools, max_idle=0.5)
    async for call in runner:
        calls.append(call)
    done.set()
    return calls


def test_a_custom_tool_is_answered_through_the_sdks_tool_runner(
        tmp_path: Path, server: ScriptedServer) -> None:
    from anthropic.lib.tools import beta_async_tool

    server.script(reply.tool_use("lookup_weather", {"city": "Oslo"}),
                  reply.text("It is 7 degrees in Oslo."))

    @beta_async_tool(name="lookup_weather", description="Weather for a city")
    async def lookup_weather(city: str) -> str:
        return f"{city}: 7 degrees"

    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[{
            "type": "custom", "name": "lookup_weather", "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"]}}])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("weather?")])
        calls = asyncio.run(asyncio.wait_for(run_runner(
            served.async_client(), session.id, [lookup_weather], threading.Event()), 60))
        events = wait_for(client, session.id, idle_end_turn)
    assert len(calls) == 1
    kinds = types(events)
    use = next(e for e in events if e["type"] == "agent.custom_tool_use")
    idle = next(e for e in events if e["type"] == "session.status_idle")
    assert idle["stop_reason"] == {"type": "requires_action", "event_ids": [use["id"]]}
    answer = next(e for e in events if e["type"] == "user.custom_tool_result")
    assert answer["custom_tool_use_id"] == use["id"]
    assert kinds.index("agent.custom_tool_use") < kinds.index("user.custom_tool_result")
    [result] = tool_results(server.requests[1].body)
    assert "Oslo: 7 degrees" in text_of(result)
    assert events[-1]["type"] == "session.status_idle"


def test_bash_runs_in_a_cloud_environment(tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.tool_use("bash", {"command": "echo served > note.txt && cat note.txt"}),
                  reply.text("done"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("write a note")])
        events = wait_for(client, session.id, idle_end_turn)
    use = next(e for e in events if e["type"] == "agent.tool_use")
    assert use["name"] == "bash" and use["evaluated_permission"] == "allow"
    result = next(e for e in events if e["type"] == "agent.tool_result")
    assert result["tool_use_id"] == use["id"] and result["is_error"] is False
    assert "served" in json.dumps(result["content"])
    [model_saw] = tool_results(server.requests[1].body)
    assert "served" in text_of(model_saw)
    notes = list((tmp_path / "serve" / "workspaces").glob("*/note.txt"))
    assert [n.read_text() for n in notes] == ["served\n"]


def test_a_self_hosted_session_runs_bash_and_edit_through_the_sdk_runner(
        tmp_path: Path, server: ScriptedServer) -> None:
    from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401

    client_dir = tmp_path / "client-side"
    client_dir.mkdir()
    (client_dir / "app.py").write_text("GREETING = 'hello'\n")
    server.script(
        reply.tool_use("bash", {"command": "ls"}),
        reply.tool_use("edit", {"file_path": "app.py", "old_string": "hello",
                                "new_string": "hej"}),
        reply.text("edited"))

    async def drive(served: Any, session_id: str) -> list[Any]:
        async with AgentToolContext(workdir=str(client_dir)) as context:
            return await run_runner(served.async_client(), session_id,
                                    beta_agent_toolset_20260401(context), threading.Event())

    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client, config={"type": "self_hosted"})
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("say hej")])
        calls = asyncio.run(asyncio.wait_for(drive(served, session.id), 60))
        events = wait_for(client, session.id, idle_end_turn)
    assert len(calls) == 2
    assert (client_dir / "app.py").read_text() == "GREETING = 'hej'\n"
    assert "app.py" in text_of(tool_results(server.requests[1].body)[0])
    assert "agent.tool_result" not in types(events)  # the client's results are the record
    answers = [e for e in events if e["type"] == "user.tool_result"]
    assert len(answers) == 2 and all(e["processed_at"] for e in answers)  # consumed
    assert not list((tmp_path / "serve" / "workspaces").glob("*/app.py"))


def _confirming(tmp_path: Path, server: ScriptedServer, decision: str) -> tuple[list, JSON]:
    server.script(reply.tool_use("bash", {"command": "echo confirmed > flag.txt"}),
                  reply.text("finished"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[{
            "type": "agent_toolset_20260401",
            "default_config": {"permission_policy": {"type": "always_ask"}}}])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("go")])
        events = wait_for(client, session.id, lambda es: any(
            e["type"] == "session.status_idle" for e in es))
        use = next(e for e in events if e["type"] == "agent.tool_use")
        answer: JSON = {"type": "user.tool_confirmation", "tool_use_id": use["id"],
                        "result": decision}
        if decision == "deny":
            answer["deny_message"] = "not on my machine"
        client.beta.sessions.events.send(session.id, events=[answer])
        events = wait_for(client, session.id, idle_end_turn)
    return events, use


def test_always_ask_runs_the_call_once_allowed(tmp_path: Path, server: ScriptedServer) -> None:
    events, use = _confirming(tmp_path, server, "allow")
    assert use["evaluated_permission"] == "ask"
    idle = next(e for e in events if e["type"] == "session.status_idle")
    assert idle["stop_reason"] == {"type": "requires_action", "event_ids": [use["id"]]}
    assert list((tmp_path / "serve" / "workspaces").glob("*/flag.txt"))
    result = next(e for e in events if e["type"] == "agent.tool_result")
    assert result["is_error"] is False


def test_always_ask_refuses_the_call_when_denied(tmp_path: Path, server: ScriptedServer) -> None:
    events, _ = _confirming(tmp_path, server, "deny")
    assert not list((tmp_path / "serve" / "workspaces").glob("*/flag.txt"))
    result = next(e for e in events if e["type"] == "agent.tool_result")
    assert result["is_error"] is True and "not on my machine" in json.dumps(result["content"])
    [model_saw] = tool_results(server.requests[1].body)
    assert "not on my machine" in text_of(model_saw)


def test_an_interrupt_stops_a_slow_answer_and_the_session_goes_idle(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.slow("a very slow answer " * 20, 0.2, chunks=40), reply.text("next"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("talk slowly")])
        wait_for(client, session.id, lambda es: "span.model_request_start" in types(es))
        client.beta.sessions.events.send(session.id, events=[{"type": "user.interrupt"}])
        events = wait_for(client, session.id, idle_end_turn, timeout=10)
        kinds = types(events)
        assert "agent.message" not in kinds  # cut before the message was complete
        end = next(e for e in events if e["type"] == "span.model_request_end")
        assert end["is_error"] is True
        [interrupt] = [e for e in events if e["type"] == "user.interrupt"]
        assert interrupt["processed_at"] is not None
        # The session takes the next message normally.
        client.beta.sessions.events.send(session.id, events=[user_message("again")])
        events = wait_for(client, session.id, lambda es: sum(
            e["type"] == "session.status_idle" for e in es) >= 2)
        assert any(e["type"] == "agent.message" for e in events)


def test_the_servers_deny_rules_reach_the_toolsets_calls_whatever_the_spelling(
        tmp_path: Path, server: ScriptedServer) -> None:
    """`bash` and `read` are judged as wisp's Bash and Read: the operator's rules hold."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"permissions": {
        "deny": ["Bash(rm:*)", "Read(**/secret.txt)"]}}))
    spellings = ["rm -f keep.txt", "/bin/rm -f keep.txt", "command rm -f keep.txt",
                 "echo ok && rm -f keep.txt", "r\\m -f keep.txt"]
    server.script(reply.tool_use("bash", {"command": "echo kept > keep.txt; "
                                                     "echo s > secret.txt"}),
                  *(reply.tool_use("bash", {"command": c}) for c in spellings),
                  reply.tool_use("read", {"file_path": "secret.txt"}),
                  reply.text("done"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("clean up")])
        events = wait_for(client, session.id, idle_end_turn, timeout=60)
    results = [e for e in events if e["type"] == "agent.tool_result"]
    assert results[0]["is_error"] is False
    assert all(r["is_error"] for r in results[1:]), [r["content"] for r in results]
    [keep] = list((tmp_path / "serve" / "workspaces").glob("*/keep.txt"))
    assert keep.read_text() == "kept\n"
