"""Outcomes graded, through the official `anthropic` SDK against `wisp serve` and the
scripted model server: the agent works toward a `user.define_outcome`, a grader model
request scores each turn (`span.outcome_evaluation_*`), a `needs_revision` verdict sends
the agent back to work, and the session's `outcome_evaluations` says how it ended."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import cloud_setup, idle_end_turn, serving, types, wait_for
from tests.serve.outcome_scenarios import (
    RUBRIC,
    evaluations,
    last_user_text,
    max_iterations_reached,
    outcome,
    revised_then_satisfied,
    verdict,
)
from wisp.serve.grader import TOOL
from wisp.testing import ScriptedServer, reply


def test_an_outcome_satisfied_on_the_first_try(tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("Crisp leaves falling / ..."),
                  reply.error(529, "overloaded"),  # the grader's request is retried
                  verdict("satisfied", "Three lines, 5-7-5, autumn."))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        rubric_file = client.beta.files.upload(file=("rubric.md", RUBRIC.encode(),
                                                     "text/markdown"))
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        [echo] = client.beta.sessions.events.send(session.id, events=[outcome(
            rubric={"type": "file", "file_id": rubric_file.id})]).data
        assert echo.type == "user.define_outcome" and echo.outcome_id.startswith("outc_")
        assert echo.processed_at is not None
        assert echo.rubric.type == "text" and echo.rubric.content == RUBRIC  # resolved
        assert echo.max_iterations == 3
        events = wait_for(client, session.id, idle_end_turn)
        retrieved = client.beta.sessions.retrieve(session.id)
    assert types(events) == [
        "user.define_outcome", "session.status_running", "span.model_request_start",
        "agent.message", "span.model_request_end", "span.outcome_evaluation_start",
        "span.outcome_evaluation_end", "session.usage", "session.status_idle"]
    assert events[0]["id"] == echo.id and events[0]["processed_at"] is not None
    start, end = events[5], events[6]
    assert start["outcome_id"] == end["outcome_id"] == echo.outcome_id
    assert end["outcome_evaluation_start_id"] == start["id"]
    assert (start["iteration"], end["iteration"], end["result"]) == (0, 0, "satisfied")
    assert end["explanation"] == "Three lines, 5-7-5, autumn."
    assert end["usage"]["input_tokens"] == 120 and end["usage"]["output_tokens"] == 30
    [state] = retrieved.outcome_evaluations
    assert (state.outcome_id, state.result, state.iteration) == (echo.outcome_id,
                                                                 "satisfied", 0)
    assert state.explanation == end["explanation"] and state.completed_at is not None
    assert state.description == "Write a haiku about autumn"
    # The agent was given the task and its rubric; the grader is a separate request with
    # its own instructions, the rubric and the transcript, forced to answer by its tool.
    assert "Write a haiku about autumn" in last_user_text(server.requests[0].body)
    assert RUBRIC in last_user_text(server.requests[0].body)
    grading = server.requests[2].body
    assert server.requests[1].body == grading
    assert grading["tool_choice"] == {"type": "tool", "name": TOOL}
    assert [t["name"] for t in grading["tools"]] == [TOOL]
    assert len(grading["messages"]) == 1
    asked = last_user_text(grading)
    assert RUBRIC in asked and "Crisp leaves falling" in asked
    assert retrieved.usage.input_tokens >= 120  # the grader's usage is the session's too


def test_an_outcome_revised_after_a_needs_revision_verdict(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        revised_then_satisfied(server, served.client())


def test_an_outcome_that_reaches_its_max_iterations(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        max_iterations_reached(server, served.client())


def test_an_interrupt_while_grading_ends_the_outcome_interrupted(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("a draft"), reply.slow("grading slowly", 1.0, chunks=30))
    heartbeat = {"WISP_SERVE_OUTCOME_HEARTBEAT_S": "0.2"}
    with serving(tmp_path, server, env=heartbeat) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[outcome()])
        # The grader is slow: heartbeats say it is working, not stuck.
        wait_for(client, session.id,
                 lambda es: "span.outcome_evaluation_ongoing" in types(es))
        client.beta.sessions.events.send(session.id, events=[{"type": "user.interrupt"}])
        events = wait_for(client, session.id, idle_end_turn, timeout=15)
        retrieved = client.beta.sessions.retrieve(session.id)
    assert evaluations(events) == [(0, "interrupted")]
    ongoing = [e for e in events if e["type"] == "span.outcome_evaluation_ongoing"]
    start = types(events).index("span.outcome_evaluation_start")
    end = types(events).index("span.outcome_evaluation_end")
    assert ongoing and all(start < events.index(e) < end for e in ongoing)
    assert {(e["outcome_id"], e["iteration"]) for e in ongoing} == {
        (events[start]["outcome_id"], 0)}
    [state] = retrieved.outcome_evaluations
    assert state.result == "interrupted" and state.completed_at is not None
    assert len(server.requests) == 2


def test_a_budget_spent_by_the_agents_turn_fails_the_outcome_ungraded(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("a draft"), verdict("satisfied", "never asked"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id, initial_events=[outcome()],
            budget={"type": "limit", "max_list_cost": {"amount": "0.000001",
                                                       "currency": "USD"}})
        events = wait_for(client, session.id,
                          lambda es: "session.status_idle" in types(es))
        [state] = client.beta.sessions.retrieve(session.id).outcome_evaluations
    idle = next(e for e in events if e["type"] == "session.status_idle")
    assert idle["stop_reason"]["type"] == "budget_reached"
    assert len(server.requests) == 1 and evaluations(events) == []
    assert state.result == "failed" and "budget" in (state.explanation or "")


def test_an_interrupt_while_the_agent_works_ends_the_outcome_ungraded(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.slow("drafting " * 20, 0.5, chunks=30), verdict("satisfied", "no"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[outcome()])
        wait_for(client, session.id, lambda es: "span.model_request_start" in types(es))
        client.beta.sessions.events.send(session.id, events=[{"type": "user.interrupt"}])
        events = wait_for(client, session.id, idle_end_turn, timeout=15)
        [state] = client.beta.sessions.retrieve(session.id).outcome_evaluations
    assert evaluations(events) == [] and len(server.requests) == 1
    assert state.result == "interrupted" and state.completed_at is not None


def test_a_failed_grader_request_fails_the_outcome_and_says_why(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("a draft"), reply.error(400, "the grader cannot be asked"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              initial_events=[outcome()])
        events = wait_for(client, session.id, idle_end_turn)
        [state] = client.beta.sessions.retrieve(session.id).outcome_evaluations
    assert evaluations(events) == [(0, "failed")]
    [error] = [e["error"] for e in events if e["type"] == "session.error"]
    assert "the grader cannot be asked" in error["message"]
    assert state.result == "failed" and "grader" in (state.explanation or "")
