"""`kill -9` of `wisp serve` at the worst moments, then a restart on the same store: the
session completes, its log's seqs have no gap, no event is written twice, and a tool that
changes things never runs twice.

Points: right after a client event is acknowledged; during a model call; while waiting
for a custom tool's result; while a Bash call that appends to a file runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import (
    Served,
    cloud_setup,
    idle_end_turn,
    types,
    user_message,
    wait_for,
)
from wisp.serve.store.sqlite import SqliteStore
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
CUSTOM = {"type": "custom", "name": "approve", "description": "Ask a human",
          "input_schema": {"type": "object", "properties": {"what": {"type": "string"}}}}


def check_log(served: Served, session_id: str) -> list[JSON]:
    """Seqs 1..n; each server event once; each client event at most twice (queued, then
    consumed), under one id."""
    store = SqliteStore(served.store)
    try:
        log = store.log(session_id)
    finally:
        store.close()
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    counts = Counter(e["id"] for e in log)
    for entry in log:
        limit = 2 if entry["type"].startswith("user.") else 1
        assert counts[entry["id"]] <= limit, f"{entry['type']} {entry['id']} written twice"
    return log


def start(tmp: Path, model: ScriptedServer) -> Served:
    return Served(tmp, model).start()


def test_killed_right_after_a_client_event_is_acknowledged(tmp_path: Path,
                                                           server: ScriptedServer) -> None:
    server.script(reply.slow("slow first answer", 0.3, chunks=10), reply.text("answered"))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("hello")])
    served.kill()
    served = start(tmp_path, server)
    try:
        client = served.client()
        events = wait_for(client, session.id, lambda es: idle_end_turn(es)
                          and "agent.message" in types(es))
    finally:
        served.stop()
    assert types(events).count("session.status_idle") == 1  # no idle before the answer
    message = next(e for e in events if e["type"] == "agent.message")
    assert message["content"][0]["text"] in ("slow first answer", "answered")
    log = check_log(served, session.id)
    assert [e["type"] for e in log].count("agent.message") == 1


def test_killed_during_a_model_call_the_call_is_sent_again(tmp_path: Path,
                                                           server: ScriptedServer) -> None:
    server.script(reply.slow("never finished " * 10, 0.5, chunks=30), reply.text("second try"))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("hello")])
    wait_for(client, session.id, lambda es: "span.model_request_start" in types(es))
    served.kill()
    served = start(tmp_path, server)
    try:
        events = wait_for(served.client(), session.id, idle_end_turn)
    finally:
        served.stop()
    assert [e["content"][0]["text"] for e in events if e["type"] == "agent.message"] == [
        "second try"]
    assert types(events).count("span.model_request_start") == 2
    assert types(events).count("span.model_request_end") == 1
    # The restart says the session's work was rescheduled, then running again.
    rescheduled = types(events).index("session.status_rescheduled")
    assert types(events)[rescheduled + 1] == "session.status_running"
    log = check_log(served, session.id)
    assert [e["type"] for e in log].count("user.message") == 2  # queued, consumed once
    requests = [r.body for r in server.requests if r.body]
    assert requests[-1]["messages"] == requests[0]["messages"]  # the same call, again


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
def test_stopped_while_waiting_for_a_custom_tool_result(tmp_path: Path,
                                                        server: ScriptedServer,
                                                        how: str) -> None:
    """A drained stop too leaves the wait as it was: the call still gets the client's
    answer after the restart, not an "interrupted" result."""
    server.script(reply.tool_use("approve", {"what": "deploy"}), reply.text("deployed"))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client, tools=[CUSTOM])
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("deploy?")])
    events = wait_for(client, session.id, lambda es: "session.status_idle" in types(es))
    use = next(e for e in events if e["type"] == "agent.custom_tool_use")
    if how == "kill -9":
        served.kill()
    else:
        assert served.stop() == 0
    served = start(tmp_path, server)
    try:
        client = served.client()
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
            "content": [{"type": "text", "text": "approved by Kim"}]}])
        events = wait_for(client, session.id, idle_end_turn)
    finally:
        served.stop()
    assert any(e["type"] == "agent.message" and e["content"][0]["text"] == "deployed"
               for e in events)
    results = [b for b in server.requests[-1].body["messages"][-1]["content"]
               if b.get("type") == "tool_result"]
    assert json.dumps(results).count("approved by Kim") == 1
    check_log(served, session.id)
    assert types(events).count("agent.custom_tool_use") == 1


def test_a_bash_call_cut_by_a_crash_is_not_run_again(tmp_path: Path,
                                                     server: ScriptedServer) -> None:
    server.script(reply.tool_use("bash", {"command": "echo ran >> count.txt; sleep 30"}),
                  reply.text("noted"))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("count")])
    workspaces = tmp_path / "serve" / "workspaces"
    wait_for(client, session.id, lambda es: bool(list(workspaces.glob("*/count.txt"))))
    served.kill()
    served = start(tmp_path, server)
    try:
        events = wait_for(served.client(), session.id, idle_end_turn)
    finally:
        served.stop()
    [count] = list(workspaces.glob("*/count.txt"))
    assert count.read_text() == "ran\n"  # once, not twice
    result = next(e for e in events if e["type"] == "agent.tool_result")
    assert result["is_error"] is True and "restarted" in json.dumps(result["content"])
    check_log(served, session.id)


def test_sigterm_drains_a_running_turn_before_exiting(tmp_path: Path,
                                                      server: ScriptedServer) -> None:
    import signal

    server.script(reply.slow("finished while draining", 0.1, chunks=10))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("hello")])
    wait_for(client, session.id, lambda es: "span.model_request_start" in types(es))
    assert served.proc is not None
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    store = SqliteStore(served.store)
    try:
        kinds = [e["type"] for e in store.log(session.id)]
    finally:
        store.close()
    assert kinds[-1] == "session.status_idle" and "agent.message" in kinds
    check_log(served, session.id)


def test_killed_while_grading_an_outcome_the_grading_runs_again(
        tmp_path: Path, server: ScriptedServer) -> None:
    from wisp.serve.grader import TOOL

    server.script(reply.text("a haiku"), reply.slow("grading " * 10, 0.5, chunks=30),
                  reply.tool_use(TOOL, {"result": "satisfied", "explanation": "good"}))
    served = start(tmp_path, server)
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[{
        "type": "user.define_outcome", "description": "a haiku",
        "rubric": {"type": "text", "content": "5-7-5"}}])
    wait_for(client, session.id, lambda es: "span.outcome_evaluation_start" in types(es))
    served.kill()
    served = start(tmp_path, server)
    try:
        client = served.client()
        events = wait_for(client, session.id, idle_end_turn)
        [state] = client.beta.sessions.retrieve(session.id).outcome_evaluations
    finally:
        served.stop()
    assert len(server.requests) == 3  # the agent's turn is not run again; the grader is
    ends = [e for e in events if e["type"] == "span.outcome_evaluation_end"]
    assert [(e["iteration"], e["result"]) for e in ends] == [(0, "satisfied")]
    assert types(events).count("span.outcome_evaluation_start") == 2
    assert (state.result, state.explanation) == ("satisfied", "good")
    check_log(served, session.id)
