"""`PostgresStore` used from async code (`wisp.serve.store.offload.off_loop`): calls run
on the store's threads, each on a connection of its own from the store's pool, so one
that waits (on a lock, a slow query) holds up neither the event loop nor the calls after
it; and the pool stays within its size."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.waits import until, wait_until
from wisp.serve.store.offload import off_loop
from wisp.serve.store.postgres import LOOP_CONNECTIONS, THREADS, PostgresStore

OWNER = "owner-a"


@pytest.fixture
def store(dsn: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(dsn)
    yield opened
    opened.close()


def _ours(admin: psycopg.Connection[Any], *, waiting: bool = False) -> int:
    """The store's connections to this database (only those waiting on a lock)."""
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND datname = current_database()"
        + (" AND wait_event_type = 'Lock'" if waiting else "")).fetchone()
    return int(row[0]) if row else 0


def test_a_call_waiting_on_a_lock_holds_up_neither_the_loop_nor_other_calls(
        store: PostgresStore, dsn: str) -> None:
    store.create("agent", OWNER, {"id": "agent_1", "created_at": "2026-01-01T00:00:00Z"})

    async def scenario(admin: psycopg.Connection[Any]) -> None:
        reading = asyncio.ensure_future(off_loop(store, store.log, "sesn_1"))
        await until(lambda: _ours(admin, waiting=True), "the log read to wait on the lock")
        found = await asyncio.wait_for(
            off_loop(store, store.get, "agent", OWNER, "agent_1"), 20)
        assert found is not None and found["id"] == "agent_1"
        assert store.get("agent", OWNER, "agent_1") == found  # on the loop: its own too
        assert not reading.done()
        holder.rollback()
        assert await asyncio.wait_for(reading, 20) == []

    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        holder.execute("LOCK TABLE wisp.log IN ACCESS EXCLUSIVE MODE")
        asyncio.run(scenario(admin))


def test_concurrent_calls_stay_within_the_pool(store: PostgresStore, dsn: str) -> None:
    async def scenario() -> list[list[dict[str, Any]]]:
        return await asyncio.gather(*(
            off_loop(store, store.append, f"sesn_{i % 5}",
                     [{"id": f"sevt_{i}", "type": "agent.message", "processed_at": None}])
            for i in range(60)))

    appended = asyncio.run(scenario())
    for n in range(5):  # each session's seqs gap-free whatever the threads' order
        seqs = sorted(e[0]["seq"] for i, e in enumerate(appended) if i % 5 == n)
        assert seqs == list(range(1, 13))
    with psycopg.connect(dsn, autocommit=True) as admin:
        assert 1 <= _ours(admin) <= THREADS + LOOP_CONNECTIONS
        store.close()
        wait_until(lambda: _ours(admin) == 0, "the pool's connections to close")
