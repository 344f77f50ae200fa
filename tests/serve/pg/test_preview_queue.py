"""`SharedFanout` queues its store calls while the database is stalled, but previews are
best effort: past `MAX_QUEUED_PREVIEWS` waiting ones, more are dropped instead of
queued without bound. A stream's watch/unwatch calls are never dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.waits import until
from wisp.serve.durable.previews import MAX_QUEUED_PREVIEWS, SharedFanout
from wisp.serve.store.postgres import PostgresStore

EXTRA = 500  # previews made past the cap


@pytest.fixture
def store(dsn: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(dsn)
    yield opened
    opened.close()


def _waiting(admin: psycopg.Connection[Any]) -> bool:
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND query ILIKE '%FROM preview_watch %'").fetchone()
    return bool(row and row[0])


def test_previews_past_the_cap_are_dropped_while_the_database_is_stalled(
        store: PostgresStore, dsn: str) -> None:
    fanout = SharedFanout(store, "worker-a")

    async def scenario(holder: psycopg.Connection[Any],
                       admin: psycopg.Connection[Any]) -> None:
        delta: dict[str, Any] = {"type": "event_delta", "delta": "x"}
        fanout.preview("sesn_1", delta)  # its look at `preview_watch` waits on the lock
        await until(lambda: _waiting(admin), "the preview's look to wait on the lock")
        for _ in range(MAX_QUEUED_PREVIEWS + EXTRA):
            fanout.preview("sesn_1", delta)
        assert fanout.queued() == MAX_QUEUED_PREVIEWS
        assert fanout.dropped_previews == EXTRA  # the first one was out of the queue already
        stop = fanout.on_preview("sesn_2", lambda event: None)  # a watch: always queued
        assert fanout.queued() == MAX_QUEUED_PREVIEWS + 1
        holder.rollback()
        await until(lambda: fanout.queued() == 0, "the queue to be sent")
        await until(lambda: store.previews_watched("sesn_2", besides="worker-b"),
                    "the watch to be recorded")
        fanout.preview("sesn_3", delta)  # room again: queued, not dropped
        assert fanout.dropped_previews == EXTRA
        stop()
        await fanout.close()
        assert fanout.queued() == 0 and fanout.queued_previews == 0

    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        holder.execute("LOCK TABLE wisp.preview_watch IN ACCESS EXCLUSIVE MODE")
        asyncio.run(scenario(holder, admin))
