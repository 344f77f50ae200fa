"""A durable turn's step makes its store calls off `wisp serve`'s event loop (issue 29,
item 5): taking the session's lease and letting it go (`durable.runner`), loading the
session's driver
(`worker.load_driver`), reading the files a client's tool result names (`file_sources`,
from `SessionDriver.client_call`), and the reads of a turn taken over from another
worker (`recovery.resume`: the conversation, the log). In a process that is API and worker
at once (`--role all`), such a call that waits on a lock must not stall the API: while
it is seen waiting (`pg_stat_activity`), a request is still answered. Made on the event
loop, the whole process waited with it.

The lease is taken with a write (held back by a row lock). The other two are plain reads
of `resources`, which only a table lock holds back, the API's reads too: the lease is
the gate (the step waits on it while `resources` is locked), and the probe is a request
answered without the store (`tests/serve/pg/locks.py`)."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

import psycopg

from tests.serve.harness import (
    Served,
    agent_texts,
    cloud_setup,
    idle_end_turn,
    user_message,
    wait_for,
)
from tests.serve.pg.locks import (
    ANSWER_WITHIN_S,
    answered_without_store,
    answers_while_waiting,
    asking_for_table,
    holding,
    waiting,
)
from tests.waits import wait_until
from wisp.testing import ScriptedServer, reply

OWNER_OF = "SELECT owner FROM resources WHERE kind = $1 AND id = $2"  # `Store.owner_of`
LEASE = "INSERT INTO leases"  # `Store.acquire_lease`
CONVERSATION_READ = "SELECT message FROM conversation"
EVENTS_READ = "SELECT e.first_seq"  # `Store.events`
CUSTOM = {"type": "custom", "name": "snapshot", "description": "A picture of the screen",
          "input_schema": {"type": "object", "properties": {}}}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def test_a_steps_lease_and_driver_load_waiting_on_locks_do_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """Another transaction inserts the session's lease first, so the step's own insert
    of it waits; meanwhile `resources` is locked, then the lease let go: the step's
    load of the session's driver waits."""
    server.script(reply.text("hello"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with holding(dsn, "INSERT INTO wisp.leases VALUES (%s, 'someone', "
                          "extract(epoch FROM clock_timestamp()) + 60)", (session.id,)) as (
                admin, let_lease_go):
            client.beta.sessions.events.send(session.id, events=[user_message("hi")])
            answers_while_waiting(served, admin, LEASE, agent.id)
            with asking_for_table(dsn, "resources") as let_resources_go:
                let_lease_go()
                answered_without_store(served, admin, OWNER_OF)
                let_resources_go()
        events = wait_for(client, session.id, idle_end_turn)
        assert agent_texts(events) == ["hello"]
    finally:
        served.stop()


def test_reading_a_client_tool_results_files_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The turn waits on a custom tool's result, an uploaded image. The session's lease
    row is locked, so the step that takes the result up waits for the lease; meanwhile
    `resources` is locked, then the lease let go: the read of the image's file waits."""
    server.script(reply.tool_use("snapshot", {}), reply.text("seen"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[CUSTOM])
        image = client.beta.files.upload(file=("shot.png", PNG, "image/png"))
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("look")])
        events = wait_for(client, session.id, lambda es: any(
            e["type"] == "session.status_idle" for e in es))
        use = next(e for e in events if e["type"] == "agent.custom_tool_use")
        with holding(dsn, "SELECT session_id FROM wisp.leases WHERE session_id = %s "
                          "FOR UPDATE", (session.id,)) as (admin, let_lease_go):
            client.beta.sessions.events.send(session.id, events=[{
                "type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
                "content": [{"type": "image",
                             "source": {"type": "file", "file_id": image.id}}]}])
            wait_until(lambda: waiting(admin, LEASE), "the step to wait for the lease")
            with asking_for_table(dsn, "resources") as let_resources_go:
                let_lease_go()
                answered_without_store(served, admin, OWNER_OF)
                let_resources_go()
        events = wait_for(client, session.id, idle_end_turn)
        assert agent_texts(events) == ["seen"]
        [result] = [b for b in server.requests[-1].body["messages"][-1]["content"]
                    if b["type"] == "tool_result"]
        assert result["content"] == [{"type": "image", "source": {  # the file's bytes
            "type": "base64", "media_type": "image/png",
            "data": base64.b64encode(PNG).decode()}}]
    finally:
        served.stop()


def test_a_turn_taken_over_reads_its_conversation_and_log_off_the_loop(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """A turn waits on a custom tool when its worker stops (SIGTERM); another process
    takes it over when the answer comes, and resumes it from the store. The lease is
    the gate (its row inserted by another transaction); meanwhile the conversation is
    locked, then the lease let go: the resume's read of the conversation waits. Then
    `latest` is locked and the conversation let go: its look for a logged answer waits."""
    server.script(reply.tool_use("snapshot", {}), reply.text("seen"))
    first = Served(tmp_path / "first", server, "--role", "all", store=dsn).start()
    second: Served | None = None
    try:
        client = first.client()
        agent, environment = cloud_setup(client, tools=[CUSTOM])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("look")])
        events = wait_for(client, session.id, lambda es: any(
            e["type"] == "session.status_idle" for e in es))
        use = next(e for e in events if e["type"] == "agent.custom_tool_use")
        second = Served(tmp_path / "second", server, "--role", "all", store=dsn).start()
        assert first.stop() == 0
        client = second.client()
        with holding(dsn, "INSERT INTO wisp.leases VALUES (%s, 'someone', "
                          "extract(epoch FROM clock_timestamp()) + 60)", (session.id,)) as (
                admin, let_lease_go):
            client.beta.sessions.events.send(session.id, events=[{
                "type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
                "content": [{"type": "text", "text": "a blue square"}]}])
            wait_until(lambda: waiting(admin, LEASE), "the step to wait for the lease")
            with asking_for_table(dsn, "conversation") as let_conversation_go:
                let_lease_go()
                answers_while_waiting(second, admin, CONVERSATION_READ, agent.id)
                with asking_for_table(dsn, "latest") as let_latest_go:
                    let_conversation_go()
                    answers_while_waiting(second, admin, EVENTS_READ, agent.id)
                    let_latest_go()
        events = wait_for(client, session.id, idle_end_turn)
        assert agent_texts(events) == ["seen"]
        assert "a blue square" in str(server.requests[-1].body["messages"][-1])
    finally:
        first.stop()
        if second is not None:
            second.stop()


def test_a_steps_lease_release_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """While the turn's model request is held, the session's lease row is locked against
    its deletion (`FOR KEY SHARE`: the turn's fenced writes and lease renewals still go
    through), so the step's release of the lease at the turn's end waits."""
    answer = threading.Event()

    def answered_when_let(body: dict[str, Any]) -> reply.Reply:
        answer.wait(ANSWER_WITHIN_S * 3)
        return reply.text("hello")

    server.script(reply.dynamic(answered_when_let))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("hi")])
        wait_until(lambda: server.requests, "the turn's model request")
        with holding(dsn, "SELECT session_id FROM wisp.leases WHERE session_id = %s "
                          "FOR KEY SHARE", (session.id,)) as (admin, let_lease_go):
            answer.set()
            answers_while_waiting(served, admin, "DELETE FROM leases", agent.id)
            events = wait_for(client, session.id, idle_end_turn)  # the turn ended before
            let_lease_go()
        assert agent_texts(events) == ["hello"]
        wait_until(lambda: not _leases(dsn, session.id), "the lease to be let go")
    finally:
        answer.set()
        served.stop()


def _leases(dsn: str, session_id: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM wisp.leases WHERE session_id = %s",
                           (session_id,)).fetchone()
    return int(row[0]) if row else 0
