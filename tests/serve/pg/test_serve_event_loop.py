"""A slow PostgreSQL query must not stall `wisp serve`'s event loop (issue 29).

Another connection takes an exclusive lock on a table the service polls, so the service's
next read of it waits until the lock is let go: the SSE stream's log read (`follow`,
table `log`) or the webhook deliverer's claim (`Deliverer.step`, table `outbox`). While
the service's query is seen waiting on the lock (`pg_stat_activity`), another request to
the same process must still be answered. With the store called on the event loop the
whole process waited with it, and the request could not be answered before the lock was
released. The same holds for a session worker's log writes in a process that is API and
worker at once (`--role all`): the turn's write waits, the API answers."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest

from tests.serve.harness import KEYS, Served, cloud_setup, idle_end_turn, user_message, wait_for
from tests.serve.test_webhooks import FAST, Receiver, kinds, register
from tests.waits import wait_until
from wisp.testing import ScriptedServer, reply

# Far above what answering `GET /v1/agents` takes, even on a loaded machine; on a
# blocked event loop the answer never comes while the lock is held.
ANSWER_WITHIN_S = 20.0


def _waiting_on_lock(admin: psycopg.Connection[Any], table: str) -> bool:
    """Whether a query of the service on `table` waits for a lock now."""
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND query ILIKE %s",
        (f"%FROM {table} %",)).fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def _locked(dsn: str, table: str) -> Iterator[psycopg.Connection[Any]]:
    """`table` (in the store's schema) locked against every reader until the block ends;
    yields a second connection to watch the server with."""
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        holder.execute(f"LOCK TABLE wisp.{table} IN ACCESS EXCLUSIVE MODE")
        try:
            yield admin
        finally:
            holder.rollback()  # lets the service's query go on


@contextlib.contextmanager
def _stream(url: str, session_id: str) -> Iterator[None]:
    """An SSE subscriber on the session, its request sent (its answer is not read)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"GET /v1/sessions/{session_id}/events/stream HTTP/1.1\r\n"
                     f"host: {host}\r\nx-api-key: {KEYS[0]}\r\n"
                     "anthropic-version: 2023-06-01\r\n\r\n".encode())
        yield


@pytest.mark.parametrize("table", ["log", "outbox"])
def test_a_query_waiting_on_a_lock_does_not_stall_other_requests(
        tmp_path: Path, server: ScriptedServer, dsn: str, table: str) -> None:
    served = Served(tmp_path, server, "--role", "api", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with _locked(dsn, table) as admin, _stream(served.url, session.id):
            # `log`: the stream's poll waits on it; `outbox`: the deliverer's next round.
            wait_until(lambda: _waiting_on_lock(admin, table),
                       f"the service's read of {table} to wait on the lock")
            with httpx2.Client(base_url=served.url, timeout=ANSWER_WITHIN_S) as http:
                answer = http.get("/v1/agents", headers={"x-api-key": KEYS[0],
                                                         "anthropic-version": "2023-06-01"})
            assert answer.status_code == 200
            assert [a["id"] for a in answer.json()["data"]] == [agent.id]
            assert _waiting_on_lock(admin, table)  # answered while the query still waits
    finally:
        served.stop()


def _waiting(admin: psycopg.Connection[Any], statement: str) -> bool:
    """Whether a statement of the service containing `statement` waits for a lock now."""
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND query ILIKE %s", (f"%{statement}%",)).fetchone()
    return bool(row and row[0])


def _logged(dsn: str, session_id: str) -> list[tuple[int, str]]:
    """The session's log as stored: (seq, type) in seq order."""
    with psycopg.connect(dsn) as conn:
        return [(int(seq), str(kind)) for seq, kind in conn.execute(
            "SELECT seq, type FROM wisp.log WHERE session_id = %s ORDER BY seq",
            (session_id,)).fetchall()]


@pytest.mark.parametrize(("table", "statement"), [
    ("outbox", "INSERT INTO outbox "),  # the turn's first status write, with its delivery
    ("preview_watch", "FROM preview_watch "),  # the look before publishing a preview
])
def test_a_worker_write_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str, table: str,
        statement: str) -> None:
    """`--role all`: API and worker in one process. A turn's store call waits on a
    locked table: its first status write, which carries its webhook delivery (`outbox`),
    or the look at who watches its previews before they are published by NOTIFY
    (`preview_watch`). Meanwhile the API must answer; once the lock goes, the turn ends
    with its whole log, in order. With the driver's writes and the previews on the event
    loop the whole process waited with the call."""
    server.script(reply.text("hello"))
    receiver = Receiver()
    served = Served(tmp_path, server, "--role", "all", store=dsn, env=FAST).start()
    headers = {"x-api-key": KEYS[0], "anthropic-version": "2023-06-01"}
    try:
        client = served.client()
        assert register(served, receiver.url).status_code == 200
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with _locked(dsn, table) as admin, httpx2.Client(
                base_url=served.url, timeout=ANSWER_WITHIN_S, headers=headers) as http:
            sent = http.post(f"/v1/sessions/{session.id}/events",
                             json={"events": [user_message("hi")]})
            assert sent.status_code == 200
            wait_until(lambda: _waiting(admin, statement),
                       f"the worker's store call on {table} to wait on the lock")
            answer = http.get("/v1/agents")
            assert answer.status_code == 200
            assert [a["id"] for a in answer.json()["data"]] == [agent.id]
            assert _waiting(admin, statement)  # answered while the call still waits
        events = wait_for(client, session.id, idle_end_turn)
        logged = _logged(dsn, session.id)
        assert [seq for seq, _ in logged] == list(range(1, len(logged) + 1))
        assert [kind for _, kind in logged] == [
            "user.message", "session.status_running", "user.message",
            "span.model_request_start", "agent.message", "span.model_request_end",
            "session.usage", "session.status_idle"]
        assert [e["content"][0]["text"] for e in events if e["type"] == "agent.message"] == [
            "hello"]
        received = receiver.wait_for(lambda rs: len(rs) >= 2)
        assert kinds(received) == ["session.status_run_started", "session.status_idled"]
    finally:
        served.stop()
        receiver.close()
