"""Errors as the API reports them, through the official `anthropic` SDK: retried model
requests visible, `retries_exhausted` after the last, an unknown tool answered to the
model as an error, and the API's validation rules."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.serve.harness import (
    KEYS,
    anthropic,
    cloud_setup,
    idle_end_turn,
    serving,
    types,
    user_message,
    wait_for,
)
from wisp.testing import ScriptedServer, reply


def test_failed_model_requests_are_retried_visibly_then_exhausted(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(*(reply.error(500, "backend down") for _ in range(3)))
    with serving(tmp_path, server, env={"WISP_MAX_RETRIES": "2"}) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        events = wait_for(client, session.id, lambda es: "session.status_idle" in types(es))
    assert len(server.requests) == 3
    starts = [e for e in events if e["type"] == "span.model_request_start"]
    ends = [e for e in events if e["type"] == "span.model_request_end"]
    assert len(starts) == len(ends) == 3  # one span per failed request
    assert all(e["is_error"] for e in ends)
    assert [e["model_request_start_id"] for e in ends] == [e["id"] for e in starts]
    errors = [e["error"] for e in events if e["type"] == "session.error"]
    assert [e["retry_status"]["type"] for e in errors] == ["retrying", "retrying", "exhausted"]
    assert {e["type"] for e in errors} == {"model_request_failed_error"}
    idle = next(e for e in events if e["type"] == "session.status_idle")
    assert idle["stop_reason"]["type"] == "retries_exhausted"
    # Each retry is said as the API says a transient failure: the session is rescheduled.
    assert types(events).count("session.status_rescheduled") == 2


def test_a_retried_model_request_that_succeeds_runs_on(tmp_path: Path,
                                                        server: ScriptedServer) -> None:
    server.script(reply.error(529, "overloaded"), reply.text("there you are"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        events = wait_for(client, session.id, idle_end_turn)
        status = client.beta.sessions.retrieve(session.id).status
    assert types(events) == [
        "user.message", "session.status_running", "span.model_request_start",
        "span.model_request_end", "session.error", "session.status_rescheduled",
        "session.status_running", "span.model_request_start", "agent.message",
        "span.model_request_end", "session.usage", "session.status_idle"]
    error = next(e for e in events if e["type"] == "session.error")["error"]
    assert (error["type"], error["retry_status"]["type"]) == ("model_overloaded_error",
                                                              "retrying")
    assert status == "idle"


def test_an_unknown_tool_is_answered_to_the_model_as_an_error(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.tool_use("teleport", {"to": "mars"}), reply.text("cannot"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("go")])
        events = wait_for(client, session.id, idle_end_turn)
    assert "agent.custom_tool_use" not in types(events)
    use = next(e for e in events if e["type"] == "agent.tool_use")
    result = next(e for e in events if e["type"] == "agent.tool_result")
    assert use["name"] == "teleport" and result["tool_use_id"] == use["id"]
    assert result["is_error"]
    sent = server.requests[1].body["messages"][-1]["content"]
    assert any(b.get("type") == "tool_result" and b.get("is_error") for b in sent)


def test_the_apis_validation_rules(tmp_path: Path, server: ScriptedServer) -> None:
    from anthropic.types.beta import BetaEnvironmentArchivedError

    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        # An answer names a call of this session of the kind it answers.
        with pytest.raises(anthropic.BadRequestError, match="custom_tool_use_id"):
            client.beta.sessions.events.send(session.id, events=[{
                "type": "user.custom_tool_result", "custom_tool_use_id": "sevt_nothing",
                "content": [{"type": "text", "text": "42"}]}])
        with pytest.raises(anthropic.BadRequestError, match=r"events\[0\].tool_use_id"):
            client.beta.sessions.events.send(session.id, events=[{
                "type": "user.tool_confirmation", "tool_use_id": "sevt_nothing",
                "result": "allow"}])
        client.beta.sessions.archive(session.id)
        with pytest.raises(anthropic.BadRequestError, match="archived"):
            client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        client.beta.environments.archive(environment.id)
        with pytest.raises(BetaEnvironmentArchivedError):
            client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        other = client.beta.environments.create(name="other")
        client.beta.agents.archive(agent.id)
        with pytest.raises(anthropic.BadRequestError, match=r"agent .* is archived"):
            client.beta.sessions.create(agent={"type": "agent", "id": agent.id, "version": 1},
                                        environment_id=other.id)
        for _ in range(3):
            client.beta.agents.create(name="more", model="claude-sonnet-4-5")
        capped = client.beta.agents.list(limit=500, include_archived=True)
        wrong = httpx2.post(f"{served.url}/v1/agents", content=b'{"name": "x"}',
                            headers={"x-api-key": KEYS[0], "content-type": "text/plain"})
    assert len(capped.data) == 4
    assert wrong.status_code == 400 and "content-type" in wrong.json()["error"]["message"]


def test_a_refusal_idles_the_session_with_refusal(tmp_path: Path,
                                                  server: ScriptedServer) -> None:
    refusal = reply.message([{"type": "text", "text": "I can't help with that."}],
                            stop_reason="refusal")
    server.script(refusal, refusal, reply.text("fine now"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("something")])
        events = wait_for(client, session.id, lambda es: "session.status_idle" in types(es))
        idle = next(e for e in events if e["type"] == "session.status_idle")
        client.beta.sessions.events.send(session.id, events=[user_message("else")])
        wait_for(client, session.id, idle_end_turn)  # the session goes on
    # The engine asks once more after a refusal; the second ends the turn as the API does.
    assert len(server.requests) == 3
    assert idle["stop_reason"] == {"type": "refusal"}
    assert idle["stop_details"]["type"] == "refusal"
    assert not [e for e in events if e["type"] == "session.error"]
    ends = [e for e in events if e["type"] == "span.model_request_end"]
    assert len(ends) == 2 and not any(e["is_error"] for e in ends)


def test_content_the_model_would_refuse_is_refused_on_receipt(
        tmp_path: Path, server: ScriptedServer) -> None:
    png = "iVBORw0KGgo="
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        send = client.beta.sessions.events.send
        for content, field in (
                ([{"type": "image", "source": {"type": "base64", "media_type": "image/bmp",
                                               "data": png}}],
                 "events[0].content[0].source.media_type"),
                ([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                               "data": "not base64!"}}],
                 "events[0].content[0].source.data"),
                ([{"type": "document", "source": {"type": "base64",
                                                  "media_type": "image/png", "data": png}}],
                 "events[0].content[0].source.media_type"),
                ([], "events[0].content")):
            with pytest.raises(anthropic.BadRequestError, match=field.replace("[", r"\[")):
                send(session.id, events=[{"type": "user.message", "content": content}])
        accepted = send(session.id, events=[{"type": "user.message", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": png}}]}])
        listed = [e.type for e in client.beta.sessions.events.list(session.id)]
    assert accepted.data[0].type == "user.message"
    assert listed[0] == "user.message"  # only the accepted one was logged
