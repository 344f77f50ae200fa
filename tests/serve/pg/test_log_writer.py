"""A driver's `SessionLog` on PostgreSQL (`deferred`, `wisp.serve.log_writer`): writes are
made off the event loop by one task per session, in the order they were made; a write
waiting on a lock holds up neither the loop nor the caller, and its followers are woken
only once it is stored; a fenced write stops the writer, and nothing after it is
written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.waits import until
from wisp.serve import shapes
from wisp.serve.session_log import Fanout, SessionLog
from wisp.serve.store.base import LeaseLost
from wisp.serve.store.postgres import PostgresStore

SESSION = "sesn_1"


@pytest.fixture
def store(dsn: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(dsn)
    yield opened
    opened.close()


def _message(n: int) -> shapes.ServerEvent:
    return shapes.agent_message(f"message {n}")


def _texts(store: PostgresStore) -> list[str]:
    return [e["content"][0]["text"] for e in store.log(SESSION)]


def test_writes_reach_the_store_in_the_order_they_were_made(store: PostgresStore) -> None:
    async def scenario() -> None:
        log = SessionLog(store, Fanout(), SESSION, deferred=True)
        for n in range(40):
            [entry] = log.emit(_message(n))
            assert "seq" not in entry  # queued: the store has not numbered it yet
        await log.flush()

    asyncio.run(scenario())
    assert _texts(store) == [f"message {n}" for n in range(40)]
    assert [e["seq"] for e in store.log(SESSION)] == list(range(1, 41))


def _waiting(admin: psycopg.Connection[Any]) -> bool:
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND datname = current_database()").fetchone()
    return bool(row and row[0])


def test_a_write_waiting_on_a_lock_holds_up_neither_the_loop_nor_the_caller(
        store: PostgresStore, dsn: str) -> None:
    async def scenario(holder: psycopg.Connection[Any],
                       admin: psycopg.Connection[Any]) -> None:
        fanout = Fanout()
        woken = fanout.watch(SESSION)
        log = SessionLog(store, fanout, SESSION, deferred=True)
        log.emit(_message(1))  # returns at once: the write waits on its own thread
        log.emit(_message(2))
        await until(lambda: _waiting(admin), "the write to wait on the lock")
        flushed = asyncio.ensure_future(log.flush())
        for _ in range(20):  # the loop runs on; the flush waits for the write
            await asyncio.sleep(0)
        assert not flushed.done() and not woken.is_set()
        holder.rollback()
        await asyncio.wait_for(flushed, 20)
        assert woken.is_set()  # the follower is woken once the write is stored

    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        holder.execute("LOCK TABLE wisp.log IN ACCESS EXCLUSIVE MODE")
        asyncio.run(scenario(holder, admin))
    assert _texts(store) == ["message 1", "message 2"]


def test_a_fenced_write_stops_the_writer(store: PostgresStore) -> None:
    assert store.acquire_lease(SESSION, "worker-a", 30)

    async def scenario() -> None:
        log = SessionLog(store, Fanout(), SESSION, holder="worker-a", deferred=True)
        log.emit(_message(1))
        await log.flush()
        store.release_lease(SESSION, "worker-a")  # thought dead: another takes over
        assert store.acquire_lease(SESSION, "worker-b", 30)
        log.emit(_message(2))
        log.emit(_message(3))
        with pytest.raises(LeaseLost):
            await log.flush()
        assert log.fenced
        with pytest.raises(LeaseLost):  # the engine's next write fails at once
            log.emit(_message(4))

    asyncio.run(scenario())
    assert _texts(store) == ["message 1"]
