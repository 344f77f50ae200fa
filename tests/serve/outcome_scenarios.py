"""Outcome scenarios run on both deployments (tests/serve/test_sdk_outcomes.py, SQLite;
tests/serve/pg/test_sdk_outcomes_pg.py, PostgreSQL split by role): a client of `wisp
serve` and the scripted model server it talks to."""

from __future__ import annotations

from typing import Any

from tests.serve.harness import cloud_setup, idle_end_turn, wait_for
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


def revised_then_satisfied(server: ScriptedServer, client: Any) -> None:
    """needs_revision, the agent revises with the grader's explanation, satisfied."""
    server.script(reply.text("Leaves fall."),
                  verdict("needs_revision", "Only one line; the rubric asks for three."),
                  reply.text("Crisp leaves falling /\nwind hums in the maple tree /\n"
                             "autumn says goodbye"),
                  verdict("satisfied", "Now three lines of 5-7-5."))
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


def max_iterations_reached(server: ScriptedServer, client: Any) -> None:
    """Unmet at the last evaluation: max_iterations_reached, one acknowledgment turn."""
    server.script(reply.text("draft one"), verdict("needs_revision", "not 5-7-5"),
                  reply.text("draft two"), verdict("needs_revision", "still not 5-7-5"),
                  reply.text("Understood: the syllable count is still off."),
                  reply.text("never asked for"))
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[outcome(max_iterations=2)])
    events = wait_for(client, session.id, idle_end_turn)
    retrieved = client.beta.sessions.retrieve(session.id)
    assert evaluations(events) == [(0, "needs_revision"), (1, "max_iterations_reached")]
    assert len(server.requests) == 5  # the last turn acknowledges; no grader follows it
    assert "still not 5-7-5" in last_user_text(server.requests[4].body)
    assert [e["type"] for e in events][-4:] == [
        "agent.message", "span.model_request_end", "session.usage", "session.status_idle"]
    messages = [e["content"][0]["text"] for e in events if e["type"] == "agent.message"]
    assert messages[-1] == "Understood: the syllable count is still off."
    [state] = retrieved.outcome_evaluations
    assert (state.result, state.iteration) == ("max_iterations_reached", 1)
    assert state.explanation == "still not 5-7-5" and state.completed_at is not None
