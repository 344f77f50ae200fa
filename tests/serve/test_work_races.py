"""The self-hosted work queue's steps racing each other (tests/serve/test_sdk_environments.py
covers the queue through the SDK's worker): a stop that lands between a worker's read of
an item and its write is not overwritten. Made deterministic by `tests.serve.interleave`
on a real SQLite store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.interleave import OtherWriteFirst
from wisp.serve.store.sqlite import SqliteStore
from wisp.serve.work import WorkQueue, lease_key

OWNER, ENV = "owner-a", "env_1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "store.db")
    yield opened
    opened.close()


def test_a_stop_before_a_heartbeats_write_reaches_the_worker(store: SqliteStore) -> None:
    api = WorkQueue(store)
    racing = OtherWriteFirst(store, "work:")
    worker = WorkQueue(racing)  # type: ignore[arg-type]
    item = api.offer(OWNER, ENV, "sesn_1")
    assert item is not None
    claimed = asyncio.run(worker.poll(OWNER, ENV, block_ms=None, reclaim_ms=None,
                                      worker_id="w1"))
    assert claimed is not None
    acked = worker.ack(OWNER, claimed)
    racing.arm(lambda: api.stop(OWNER, api.get(OWNER, ENV, item["id"]), force=False))
    answer = worker.heartbeat(OWNER, acked, None, None)
    assert racing.fired
    assert (answer["lease_extended"], answer["state"]) == (False, "stopping")
    stored = api.get(OWNER, ENV, item["id"])
    assert stored["state"] == "stopping" and stored["stop_requested_at"] is not None


def test_a_poll_does_not_bring_back_an_item_stopped_before_its_claim_was_written(
        store: SqliteStore) -> None:
    api = WorkQueue(store)
    racing = OtherWriteFirst(store, "work:")
    worker = WorkQueue(racing)  # type: ignore[arg-type]
    item = api.offer(OWNER, ENV, "sesn_1")
    assert item is not None
    racing.arm(lambda: api.request_stop(OWNER, ENV, "sesn_1"))  # the session was archived
    claimed = asyncio.run(worker.poll(OWNER, ENV, block_ms=None, reclaim_ms=None,
                                      worker_id="w1"))
    assert racing.fired and claimed is None
    assert api.get(OWNER, ENV, item["id"])["state"] == "stopped"
    assert store.lease_holder(lease_key(item["id"])) is None  # its claim given back
