"""Every route module's store calls are off `wisp serve`'s event loop (issue 29).

A second connection locks one resource row (`SELECT … FOR UPDATE`), and a request that
writes that row is sent: its store call waits on the lock. While it is seen waiting
(`pg_stat_activity`), another request to the same process must still be answered. With
the route's store call made on the event loop the whole process waited with it, and the
second request was not answered before the lock was let go. Once it is, the waiting
request completes. One case per route module: session resources, memory stores, vaults,
skills, deployments, files and the work queue's acks (the session, agent and event routes
and the SSE stream are held to the same in test_serve_event_loop.py)."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest

from tests.serve.harness import KEYS, Served, cloud_setup, user_message
from tests.serve.skill_scenarios import NOTES
from tests.waits import wait_until
from wisp.testing import ScriptedServer

# Far above what answering `GET /v1/agents` takes, even on a loaded machine; on a
# blocked event loop the answer never comes while the lock is held.
ANSWER_WITHIN_S = 20.0
HEADERS = {"x-api-key": KEYS[0], "anthropic-version": "2023-06-01"}


@dataclass
class Blocked:
    """A request whose store write waits on the lock of row (`kind`, `row_id`)."""

    kind: str
    row_id: str
    method: str
    path: str
    body: dict[str, Any] | None = None


def _resources(client: Any) -> Blocked:
    agent, environment = cloud_setup(client)
    store = client.beta.memory_stores.create(name="notes")
    session = client.beta.sessions.create(
        agent=agent.id, environment_id=environment.id,
        resources=[{"type": "memory_store", "memory_store_id": store.id}])
    return Blocked("session", session.id, "DELETE",
                   f"/v1/sessions/{session.id}/resources/{store.id}")


def _memory(client: Any) -> Blocked:
    store = client.beta.memory_stores.create(name="notes")
    return Blocked("memory_store", store.id, "POST", f"/v1/memory_stores/{store.id}",
                   {"description": "renamed"})


def _vaults(client: Any) -> Blocked:
    vault = client.beta.vaults.create(display_name="v")
    return Blocked("vault", vault.id, "POST", f"/v1/vaults/{vault.id}",
                   {"display_name": "w"})


def _skills(client: Any) -> Blocked:
    skill = client.beta.skills.create(files=NOTES)
    return Blocked("skill", skill.id, "DELETE", f"/v1/skills/{skill.id}")


def _deployments(client: Any) -> Blocked:
    agent, environment = cloud_setup(client)
    made = client.beta.deployments.create(
        name="nightly", agent=agent.id, environment_id=environment.id,
        initial_events=[user_message("write the report")])
    return Blocked("deployment", made.id, "POST", f"/v1/deployments/{made.id}/pause")


def _files(client: Any) -> Blocked:
    uploaded = client.beta.files.upload(file=("notes.txt", b"line one\n"))
    return Blocked("file", uploaded.id, "DELETE", f"/v1/files/{uploaded.id}")


def _work(client: Any) -> Blocked:
    agent = client.beta.agents.create(name="hosted", model="claude-sonnet-4-5",
                                      tools=[{"type": "agent_toolset_20260401"}])
    environment = client.beta.environments.create(name="mine",
                                                  config={"type": "self_hosted"})
    client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    item = client.beta.environments.work.poll(environment.id, anthropic_worker_id="w1")
    assert item is not None
    return Blocked(f"work:{environment.id}", item.id, "POST",
                   f"/v1/environments/{environment.id}/work/{item.id}/ack")


CASES: dict[str, Callable[[Any], Blocked]] = {
    "resources": _resources, "memory_routes": _memory, "vault_routes": _vaults,
    "skill_routes": _skills, "deployment_routes": _deployments, "files": _files,
    "work_routes": _work,
}


def _waiting_on_lock(admin: psycopg.Connection[Any]) -> bool:
    """Whether a write of the service to `resources` waits for a lock now."""
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND query ILIKE '%resources%'").fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def _row_locked(dsn: str, kind: str, row_id: str
                ) -> Iterator[tuple[psycopg.Connection[Any], Callable[[], None]]]:
    """The resource row locked against writers until `release()` (or the block's end);
    yields a second connection to watch the server with, and `release`."""
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        locked = holder.execute("SELECT id FROM wisp.resources WHERE kind = %s AND id = %s "
                                "FOR UPDATE", (kind, row_id)).fetchall()
        assert locked == [(row_id,)]
        try:
            yield admin, holder.rollback
        finally:
            holder.rollback()


@contextlib.contextmanager
def _sent(url: str, blocked: Blocked) -> Iterator[Callable[[], int]]:
    """The request sent (its answer not read yet); yields what reads its status."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    body = b"" if blocked.body is None else json.dumps(blocked.body).encode()
    head = (f"{blocked.method} {blocked.path} HTTP/1.1\r\nhost: {host}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
            + ("content-type: application/json\r\n" if body else "")
            + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    with socket.create_connection((host, int(port)), timeout=ANSWER_WITHIN_S) as sock:
        sock.sendall(head.encode() + body)

        def status() -> int:
            answer = b""
            while b"\r\n" not in answer:
                chunk = sock.recv(4096)
                assert chunk, f"connection closed before a status line: {answer!r}"
                answer += chunk
            return int(answer.split(b" ", 2)[1])

        yield status


@pytest.mark.parametrize("module", list(CASES))
def test_a_route_waiting_on_a_row_lock_does_not_stall_other_requests(
        tmp_path: Path, server: ScriptedServer, dsn: str, module: str) -> None:
    served = Served(tmp_path, server, "--role", "api", store=dsn).start()
    try:
        client = served.client()
        blocked = CASES[module](client)
        agent = client.beta.agents.create(name="probe", model="claude-sonnet-4-5")
        with _row_locked(dsn, blocked.kind, blocked.row_id) as (admin, release), \
                _sent(served.url, blocked) as status:
            wait_until(lambda: _waiting_on_lock(admin),
                       f"the {module} request's write to wait on the lock")
            with httpx2.Client(base_url=served.url, timeout=ANSWER_WITHIN_S) as http:
                answer = http.get("/v1/agents", headers=HEADERS)
            assert answer.status_code == 200
            assert agent.id in [a["id"] for a in answer.json()["data"]]
            assert _waiting_on_lock(admin)  # answered while the write still waits
            release()
            assert status() == 200  # and the waiting request goes through after
    finally:
        served.stop()
