"""The official `anthropic` SDK drives `wisp serve`: a turn to `end_turn`, auth and
isolation, listing and paging, the stream."""

from __future__ import annotations

from pathlib import Path

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


def test_a_turn_ends_with_the_agents_message(tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("hello from the agent"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        sent = client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        [queued] = sent.data
        assert queued.type == "user.message" and queued.processed_at is None
        events = wait_for(client, session.id, idle_end_turn)
        assert types(events) == [
            "user.message", "session.status_running", "span.model_request_start",
            "agent.message", "span.model_request_end", "session.usage",
            "session.status_idle"]
        message = next(e for e in events if e["type"] == "agent.message")
        assert message["content"] == [{"type": "text", "text": "hello from the agent"}]
        user = events[0]
        assert user["id"] == queued.id and user["processed_at"] is not None
        start, end = events[2], events[4]
        assert end["model_request_start_id"] == start["id"]
        assert end["model_usage"]["output_tokens"] > 0
        retrieved = client.beta.sessions.retrieve(session.id)
        assert retrieved.status == "idle"
        assert retrieved.usage.output_tokens == end["model_usage"]["output_tokens"] > 0
        usage = next(e for e in events if e["type"] == "session.usage")
        assert usage["usage"]["output_tokens"] == retrieved.usage.output_tokens
    sent_to_model = server.requests[0].body
    assert sent_to_model["messages"][-1]["content"] == [{"type": "text", "text": "hi"}]
    # The whole toolset but web_search, which has no backend here (docs/serve.md).
    assert {t["name"] for t in sent_to_model["tools"]} == {
        "bash", "read", "write", "edit", "glob", "grep", "web_fetch"}


def test_keys_authenticate_and_resources_belong_to_their_key(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        alpha, beta = served.client(KEYS[0]), served.client(KEYS[1])
        agent, _ = cloud_setup(alpha)
        try:
            served.client("wrong-key").beta.agents.list()
        except anthropic.AuthenticationError as exc:
            assert exc.status_code == 401
            assert exc.body["type"] == "error"
            assert exc.body["error"]["type"] == "authentication_error"
        else:
            raise AssertionError("a wrong key was let in")
        try:
            beta.beta.agents.retrieve(agent.id)
        except anthropic.NotFoundError:
            pass
        else:
            raise AssertionError("another key read the agent")
        assert [a.id for a in alpha.beta.agents.list()] == [agent.id]
        assert list(beta.beta.agents.list()) == []


def test_a_wrong_type_is_a_400_naming_the_field(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        try:
            client.beta.agents.create(name="x", model="claude-sonnet-4-5",
                                      extra_body={"tools": "bash"})
        except anthropic.BadRequestError as exc:
            assert "tools" in exc.message
        else:
            raise AssertionError("a string for tools was accepted")


def test_list_pages_and_the_stream_follows_live(tmp_path: Path,
                                                server: ScriptedServer) -> None:
    server.script(*(reply.text(f"answer {i}") for i in range(3)))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with client.beta.sessions.events.stream(session.id) as stream:
            client.beta.sessions.events.send(session.id, events=[user_message("one")])
            seen = []
            for event in stream:
                seen.append(event.type)
                if event.type == "session.status_idle":
                    break
        assert seen[0] == "user.message" and "agent.message" in seen
        assert seen.count("user.message") == 2  # queued, then consumed: one id
        for turn, text in enumerate(("two", "three"), start=2):
            client.beta.sessions.events.send(session.id, events=[user_message(text)])
            wait_for(client, session.id, lambda es, n=turn: sum(
                e["type"] == "session.status_idle" for e in es) >= n)
        everything = [e.model_dump() for e in client.beta.sessions.events.list(session.id)]
        paged = [e.model_dump() for e in client.beta.sessions.events.list(session.id, limit=2)]
        assert [e["id"] for e in paged] == [e["id"] for e in everything]
        assert len({e["id"] for e in everything}) == len(everything)
        only = client.beta.sessions.events.list(session.id, types=["agent.message"])
        assert [e.content[0].text for e in only] == ["answer 0", "answer 1", "answer 2"]
        newest = client.beta.sessions.events.list(session.id, order="desc", limit=1)
        assert newest.data[0].id == everything[-1]["id"]


def test_previews_come_only_when_asked_and_are_never_stored(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("streamed piece by piece", chunks=4),
                  reply.text("quiet answer", chunks=4))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)

        def one_turn(text: str, **stream_args: object) -> list[object]:
            seen = []
            with client.beta.sessions.events.stream(session.id, **stream_args) as stream:
                client.beta.sessions.events.send(session.id, events=[user_message(text)])
                for event in stream:
                    seen.append(event)
                    if event.type == "session.status_idle":
                        return seen
            return seen

        previewed = one_turn("one", event_deltas=["agent.message"])
        plain = one_turn("two")
        listed = [e.type for e in client.beta.sessions.events.list(session.id)]
    kinds = [e.type for e in previewed]
    assert "event_start" in kinds and "event_delta" in kinds
    start = next(e for e in previewed if e.type == "event_start")
    message = next(e for e in previewed if e.type == "agent.message")
    assert start.event.id == message.id  # the complete event follows its preview
    assert kinds.index("event_start") < kinds.index("agent.message")
    deltas = "".join(e.delta.content.text for e in previewed if e.type == "event_delta")
    assert deltas == "streamed piece by piece"
    assert not {"event_start", "event_delta"} & {e.type for e in plain}
    assert not {"event_start", "event_delta"} & set(listed)


def test_last_event_id_resumes_the_stream_after_it(tmp_path: Path,
                                                   server: ScriptedServer) -> None:
    import httpx2

    server.script(reply.text("first"), reply.text("second"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("a")])
        wait_for(client, session.id, idle_end_turn)
        headers = {"x-api-key": KEYS[0], "last-event-id": "3"}
        seen: list[tuple[str, str]] = []
        with httpx2.stream("GET", f"{served.url}/v1/sessions/{session.id}/events/stream",
                           headers=headers, timeout=10) as response:
            fields: dict[str, str] = {}
            for line in response.iter_lines():
                if line:
                    name, _, value = line.partition(": ")
                    fields[name] = value
                    continue
                if "id" in fields:  # one event ends at a blank line
                    seen.append((fields["id"], fields["event"]))
                    if fields["event"] == "session.status_idle":
                        break
                fields = {}
    seqs = [int(s) for s, _ in seen]
    assert seqs == list(range(4, 4 + len(seqs)))  # after 3, gap-free
    assert seen[-1][1] == "session.status_idle"


def test_sessions_of_another_key_are_not_found(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        alpha, beta = served.client(KEYS[0]), served.client(KEYS[1])
        agent, environment = cloud_setup(alpha)
        session = alpha.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        for attempt in (lambda: beta.beta.sessions.retrieve(session.id),
                        lambda: beta.beta.sessions.events.list(session.id),
                        lambda: beta.beta.sessions.events.send(
                            session.id, events=[user_message("x")]),
                        lambda: beta.beta.sessions.create(agent=agent.id,
                                                          environment_id=environment.id)):
            try:
                attempt()
            except anthropic.NotFoundError:
                continue
            raise AssertionError("another key reached the session")
        assert [s.id for s in alpha.beta.sessions.list()] == [session.id]
        assert list(beta.beta.sessions.list()) == []


def test_session_lifecycle_initial_events_update_archive_delete(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("started by the initial event"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id, title="first",
            metadata={"team": "blue"}, initial_events=[user_message("begin")])
        events = wait_for(client, session.id, idle_end_turn)
        assert "agent.message" in types(events)
        updated = client.beta.sessions.update(session.id, title="renamed",
                                              metadata={"team": "red"})
        assert (updated.title, updated.metadata) == ("renamed", {"team": "red"})
        assert client.beta.sessions.retrieve(session.id).title == "renamed"
        archived = client.beta.sessions.archive(session.id)
        assert archived.archived_at is not None
        assert [s.id for s in client.beta.sessions.list()] == []  # archived: hidden
        assert [s.id for s in client.beta.sessions.list(include_archived=True)] == [session.id]
        with client.beta.sessions.events.stream(session.id) as stream:
            deleted = client.beta.sessions.delete(session.id)
            last = None
            for event in stream:
                last = event.type
        assert deleted.id == session.id and last == "session.deleted"
        try:
            client.beta.sessions.retrieve(session.id)
        except anthropic.NotFoundError:
            pass
        else:
            raise AssertionError("a deleted session was found")
