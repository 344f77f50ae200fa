"""Outcomes graded, through the official `anthropic` SDK against `wisp serve` and the
scripted model server: the agent works toward a `user.define_outcome`, a grader model
request scores each turn (`span.outcome_evaluation_*`), a `needs_revision` verdict sends
the agent back to work, and the session's `outcome_evaluations` says how it ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.serve.harness import cloud_setup, idle_end_turn, serving, types, wait_for
from wisp.serve.grader import TOOL
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
RUBRIC = "Three lines; 5, 7 and 5 syllables; about autumn."


def outcome(max_iterations: int | None = None, rubric: JSON | None = None) -> JSON:
    event: JSON = {"type": "user.define_outcome", "description": "Write a haiku about autumn",
                   "rubric": rubric or {"type": "text", "content": RUBRIC}}
    if max_iterations is not None:
        event["max_iterations"] = max_iterations
    return event


def verdict(result: str, explanation: str) -> reply.Reply:
    return reply.tool_use(TOOL, {"result": result, "explanation": explanation},
                          usage={"input_tokens": 120, "output_tokens": 30})


def evaluations(events: list[JSON]) -> list[tuple[int, str]]:
    return [(e["iteration"], e["result"]) for e in events
            if e["type"] == "span.outcome_evaluation_end"]


def last_user_text(body: JSON) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def test_an_outcome_satisfied_on_the_first_try(tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("Crisp leaves falling / ..."),
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
    grading = server.requests[1].body
    assert grading["tool_choice"] == {"type": "tool", "name": TOOL}
    assert [t["name"] for t in grading["tools"]] == [TOOL]
    assert len(grading["messages"]) == 1
    asked = last_user_text(grading)
    assert RUBRIC in asked and "Crisp leaves falling" in asked
    assert retrieved.usage.input_tokens >= 120  # the grader's usage is the session's too


def test_an_outcome_revised_after_a_needs_revision_verdict(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("Leaves fall."),
                  verdict("needs_revision", "Only one line; the rubric asks for three."),
                  reply.text("Crisp leaves falling /\nwind hums in the maple tree /\n"
                             "autumn says goodbye"),
                  verdict("satisfied", "Now three lines of 5-7-5."))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              initial_events=[outcome()])
        events = wait_for(client, session.id, idle_end_turn)
        retrieved = client.beta.sessions.retrieve(session.id)
    assert evaluations(events) == [(0, "needs_revision"), (1, "satisfied")]
    assert len(server.requests) == 4
    # The agent went back to work in the same conversation, told what to fix.
    revise = server.requests[2].body
    assert "Only one line; the rubric asks for three." in last_user_text(revise)
    assert "Leaves fall." in str(revise["messages"])
    assert "wind hums in the maple tree" in last_user_text(server.requests[3].body)
    [state] = retrieved.outcome_evaluations
    assert (state.result, state.iteration) == ("satisfied", 1)
    idles = [e for e in events if e["type"] == "session.status_idle"]
    assert len(idles) == 1  # one turn, graded twice


def test_an_outcome_that_reaches_its_max_iterations(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("draft one"), verdict("needs_revision", "not 5-7-5"),
                  reply.text("draft two"), verdict("needs_revision", "still not 5-7-5"),
                  reply.text("Understood: the syllable count is still off."),
                  reply.text("never asked for"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[outcome(max_iterations=2)])
        events = wait_for(client, session.id, idle_end_turn)
        retrieved = client.beta.sessions.retrieve(session.id)
    assert evaluations(events) == [(0, "needs_revision"), (1, "max_iterations_reached")]
    assert len(server.requests) == 5  # the last turn acknowledges; no grader follows it
    assert "still not 5-7-5" in last_user_text(server.requests[4].body)
    assert types(events)[-4:] == ["agent.message", "span.model_request_end",
                                  "session.usage", "session.status_idle"]
    messages = [e["content"][0]["text"] for e in events if e["type"] == "agent.message"]
    assert messages[-1] == "Understood: the syllable count is still off."
    [state] = retrieved.outcome_evaluations
    assert (state.result, state.iteration) == ("max_iterations_reached", 1)
    assert state.explanation == "still not 5-7-5" and state.completed_at is not None


def test_an_interrupt_while_grading_ends_the_outcome_interrupted(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("a draft"), reply.slow("grading slowly", 1.0, chunks=30))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[outcome()])
        wait_for(client, session.id,
                 lambda es: "span.outcome_evaluation_start" in types(es))
        client.beta.sessions.events.send(session.id, events=[{"type": "user.interrupt"}])
        events = wait_for(client, session.id, idle_end_turn, timeout=15)
        retrieved = client.beta.sessions.retrieve(session.id)
    assert evaluations(events) == [(0, "interrupted")]
    [state] = retrieved.outcome_evaluations
    assert state.result == "interrupted" and state.completed_at is not None
    assert len(server.requests) == 2
