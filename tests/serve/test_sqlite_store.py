"""SqliteStore against the `base.Store` contract: resources and owner isolation, paging,
the event log and its listing, leases and the outbox, and the promises that need other
processes to check: gap-free seqs under concurrent writers, exclusive leases, and an
acknowledged append surviving `kill -9`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.store_fence import check_the_lease_fences_appends
from wisp.serve.store.sqlite import SCHEMA_VERSION, SqliteStore

JSON = dict[str, Any]
A, B = "owner-a", "owner-b"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


@pytest.fixture
def store(path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(path)
    yield opened
    opened.close()


def resource(rid: str, **fields: Any) -> JSON:
    return {"id": rid, "created_at": "2026-01-01T00:00:00Z", "archived_at": None, **fields}


def event(eid: str, etype: str = "agent.message", processed_at: str | None = None,
          **fields: Any) -> JSON:
    return {"id": eid, "type": etype, "processed_at": processed_at, **fields}


def python(script: str, *args: str, **popen: Any) -> subprocess.Popen[str]:
    """A child process running `script` against the store (its own connection)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args],
                            text=True, stdout=subprocess.PIPE, **popen)


def all_pages(fetch: Any, limit: int) -> tuple[list[str], int]:
    """Follows cursors to the end; the ids seen and the number of pages."""
    ids: list[str] = []
    page, pages = None, 0
    while True:
        got = fetch(limit=limit, page=page)
        pages += 1
        ids += [item["id"] for item in got.items]
        assert len(got.items) <= limit
        if got.next_page is None:
            return ids, pages
        page = got.next_page


# Resources ------------------------------------------------------------------------------
def test_crud_and_owner_isolation(store: SqliteStore) -> None:
    doc = resource("agent_1", name="one")
    assert store.create("agent", A, doc) == doc
    assert store.get("agent", A, "agent_1") == doc
    assert store.get("agent", B, "agent_1") is None
    assert store.get("environment", A, "agent_1") is None
    assert store.owner_of("agent", "agent_1") == A
    assert store.owner_of("agent", "agent_2") is None

    changed = {**doc, "name": "renamed"}
    assert store.update("agent", B, "agent_1", changed) is None
    assert store.get("agent", A, "agent_1") == doc
    assert store.update("agent", A, "agent_1", changed) == changed
    assert store.get("agent", A, "agent_1") == changed
    assert store.update("agent", A, "agent_missing", changed) is None

    assert store.delete("agent", B, "agent_1") is False
    assert store.delete("agent", A, "agent_1") is True
    assert store.get("agent", A, "agent_1") is None
    assert store.owner_of("agent", "agent_1") is None
    assert store.delete("agent", A, "agent_1") is False


def test_list_pages_both_orders_by_creation(store: SqliteStore) -> None:
    mine = [f"agent_{i:02d}" for i in range(23)]
    for i, rid in enumerate(mine):
        store.create("agent", A, resource(rid))
        if i % 5 == 0:  # interleave another owner's and another kind's rows
            store.create("agent", B, resource(f"other_{i}"))
            store.create("environment", A, resource(f"env_{i}"))

    def fetch(order: str) -> Any:
        return lambda **kw: store.list("agent", A, order=order, **kw)

    assert all_pages(fetch("desc"), 5) == (mine[::-1], 5)
    assert all_pages(fetch("asc"), 5) == (mine, 5)
    assert all_pages(fetch("asc"), 23) == (mine, 1)  # exact fit: no empty trailing page
    assert store.list("agent", A, limit=100, page=None).items[0]["id"] == mine[-1]  # desc
    assert [d["id"] for d in store.list("agent", B, limit=100, page=None).items] == [
        f"other_{i}" for i in (20, 15, 10, 5, 0)]
    assert store.list("agent", "nobody", limit=10, page=None).items == []
    with pytest.raises(ValueError, match="cursor"):
        store.list("agent", A, limit=5, page="not a cursor")
    store.append("sesn_1", [event("e1"), event("e2")])
    event_cursor = store.events("sesn_1", limit=1, page=None).next_page
    with pytest.raises(ValueError, match="cursor"):  # not a resource cursor
        store.list("agent", A, limit=5, page=event_cursor)
    with pytest.raises(ValueError, match="order"):
        store.list("agent", A, limit=5, page=None, order="sideways")


def test_list_hides_archived_unless_asked(store: SqliteStore) -> None:
    for i in range(6):
        store.create("agent", A, resource(f"agent_{i}"))
    for i in (1, 4):
        store.update("agent", A, f"agent_{i}",
                     resource(f"agent_{i}", archived_at="2026-01-02T00:00:00Z"))
    shown = [d["id"] for d in store.list("agent", A, limit=10, page=None, order="asc").items]
    assert shown == ["agent_0", "agent_2", "agent_3", "agent_5"]
    every = store.list("agent", A, limit=10, page=None, order="asc", include_archived=True)
    assert [d["id"] for d in every.items] == [f"agent_{i}" for i in range(6)]
    # Paging over hidden rows still reaches the end.
    assert all_pages(lambda **kw: store.list("agent", A, **kw), 3) == (
        ["agent_5", "agent_3", "agent_2", "agent_0"], 2)


# Event log ------------------------------------------------------------------------------
def test_append_assigns_seq_and_events_keep_first_position(store: SqliteStore) -> None:
    queued = event("sevt_u1", "user.message", content="hi")
    stored = store.append("sesn_1", [queued, event("sevt_s1", "session.status_running")])
    assert [(e["id"], e["seq"]) for e in stored] == [("sevt_u1", 1), ("sevt_s1", 2)]
    assert "seq" not in queued  # the caller's dict is left alone
    store.append("sesn_1", [event("sevt_a1", processed_at="2026-01-01T00:00:02Z")])
    consumed = {**queued, "processed_at": "2026-01-01T00:00:01Z"}
    assert store.append("sesn_1", [consumed])[0]["seq"] == 4
    assert store.append("sesn_1", []) == []
    assert store.append("sesn_2", [event("sevt_x")])[0]["seq"] == 1  # seqs are per session

    log = store.log("sesn_1")
    assert [(e["seq"], e["id"], e["processed_at"]) for e in log] == [
        (1, "sevt_u1", None), (2, "sevt_s1", None),
        (3, "sevt_a1", "2026-01-01T00:00:02Z"), (4, "sevt_u1", "2026-01-01T00:00:01Z")]
    assert log[0]["content"] == "hi"
    assert [e["seq"] for e in store.log("sesn_1", after_seq=2)] == [3, 4]
    assert [e["seq"] for e in store.log("sesn_1", after_seq=1, limit=2)] == [2, 3]
    assert store.last_seq("sesn_1") == 4
    assert store.last_seq("sesn_none") == 0
    assert store.log("sesn_none") == []

    listed = store.events("sesn_1", limit=10, page=None).items
    assert [(e["id"], e["processed_at"]) for e in listed] == [
        ("sevt_u1", "2026-01-01T00:00:01Z"), ("sevt_s1", None),
        ("sevt_a1", "2026-01-01T00:00:02Z")]
    assert listed[0]["seq"] == 4  # the latest form, with its own seq
    assert store.event("sesn_1", "sevt_u1") == {**consumed, "seq": 4}
    assert store.event("sesn_1", "sevt_missing") is None
    assert store.event("sesn_2", "sevt_u1") is None


def test_events_page_both_orders(store: SqliteStore) -> None:
    ids = [f"sevt_{i:03d}" for i in range(30)]
    store.append("sesn_1", [event(eid, "user.message") for eid in ids])
    # Second forms of every third event: positions must not move.
    store.append("sesn_1", [event(eid, "user.message", "2026-01-01T00:00:00Z")
                            for eid in ids[::3]])

    def fetch(order: str) -> Any:
        return lambda **kw: store.events("sesn_1", order=order, **kw)

    assert all_pages(fetch("asc"), 7) == (ids, 5)
    assert all_pages(fetch("desc"), 7) == (ids[::-1], 5)
    assert all_pages(fetch("asc"), 30) == (ids, 1)
    last = store.events("sesn_1", limit=7, page=None, order="desc")
    assert last.next_page is not None
    assert store.events("sesn_1", limit=7, page=last.next_page, order="desc").items[0][
        "id"] == ids[22]
    assert store.events("sesn_empty", limit=5, page=None).items == []
    with pytest.raises(ValueError):
        store.events("sesn_1", limit=0, page=None)


def test_events_filters(store: SqliteStore) -> None:
    store.append("sesn_1", [
        event("e1", "user.message", "2026-01-01T00:00:01Z"),
        event("e2", "agent.message", "2026-01-01T00:00:02.500Z"),
        event("e3", "agent.tool_use", "2026-01-01T02:00:03+02:00"),  # = 00:00:03Z
        event("e4", "user.message"),  # queued: no processed_at
        event("e5", "agent.message", "2026-01-01T00:00:04.000001Z"),
    ])

    def ids(**filters: Any) -> list[str]:
        return [e["id"] for e in store.events("sesn_1", limit=50, page=None, **filters).items]

    assert ids() == ["e1", "e2", "e3", "e4", "e5"]
    assert ids(types=["user.message"]) == ["e1", "e4"]
    assert ids(types=["agent.message", "agent.tool_use"]) == ["e2", "e3", "e5"]
    assert ids(types=["nothing"]) == []
    assert ids(types=[]) == ids()  # an empty list filters nothing
    assert ids(created_gt="2026-01-01T00:00:02.5Z") == ["e3", "e5"]
    assert ids(created_gte="2026-01-01T00:00:02.5Z") == ["e2", "e3", "e5"]
    assert ids(created_lt="2026-01-01T00:00:03Z") == ["e1", "e2"]
    assert ids(created_lte="2026-01-01T00:00:03Z") == ["e1", "e2", "e3"]
    assert ids(created_gte="2025-12-31") == ["e1", "e2", "e3", "e5"]  # null is excluded
    assert ids(created_gt="2026-01-01T01:00:01+01:00", created_lt="2026-01-01T00:00:04Z",
               types=["agent.message", "agent.tool_use", "user.message"]) == ["e2", "e3"]
    assert ids(created_gt="2026-01-01T00:00:04Z", order="desc") == ["e5"]
    with pytest.raises(ValueError):
        ids(created_gt="yesterday")


def test_delete_session_drops_its_log_and_lease(store: SqliteStore) -> None:
    store.create("session", A, resource("sesn_1", status="idle"))
    store.append("sesn_1", [event("e1", "user.message")])
    store.acquire_lease("sesn_1", "w1", 30)
    assert store.delete("session", A, "sesn_1")
    assert store.log("sesn_1") == []
    assert store.events("sesn_1", limit=5, page=None).items == []
    assert store.sessions_needing_work() == []
    assert store.acquire_lease("sesn_1", "w2", 30)  # the old lease went with it


# Work -----------------------------------------------------------------------------------
def test_lease_expiry_renew_and_release(store: SqliteStore) -> None:
    assert store.acquire_lease("sesn_1", "w1", 0.2)
    assert store.acquire_lease("sesn_1", "w1", 0.2)  # the holder may re-acquire
    assert not store.acquire_lease("sesn_1", "w2", 30)
    assert not store.renew_lease("sesn_1", "w2", 30)
    store.release_lease("sesn_1", "w2")  # not the holder: no effect
    assert not store.acquire_lease("sesn_1", "w2", 30)
    assert store.renew_lease("sesn_1", "w1", 0.05)
    time.sleep(0.1)
    assert store.acquire_lease("sesn_1", "w2", 30)  # expired: anyone may take it
    assert not store.renew_lease("sesn_1", "w1", 30)
    store.release_lease("sesn_1", "w2")
    assert store.acquire_lease("sesn_1", "w3", 30)
    assert not store.renew_lease("sesn_none", "w3", 30)


def test_sessions_needing_work(store: SqliteStore) -> None:
    store.create("session", A, resource("sesn_run", status="running"))
    store.create("session", A, resource("sesn_idle", status="idle"))
    store.create("session", B, resource("sesn_q", status="idle"))
    store.append("sesn_q", [event("u1", "user.message"), event("u2", "user.interrupt")])
    store.append("sesn_idle", [event("a1", "agent.message"),  # not a client event
                               event("u3", "user.message", "2026-01-01T00:00:00Z")])
    store.append("sesn_done", [event("u4", "user.message")])
    store.append("sesn_done", [event("u4", "user.message", "2026-01-01T00:00:00Z")])
    assert sorted(store.sessions_needing_work()) == ["sesn_q", "sesn_run"]
    assert len(store.sessions_needing_work(limit=1)) == 1

    assert store.acquire_lease("sesn_q", "w1", 30)
    assert store.sessions_needing_work() == ["sesn_run"]
    store.append("sesn_q", [event("u1", "user.message", "2026-01-01T00:00:00Z")])
    store.release_lease("sesn_q", "w1")
    assert sorted(store.sessions_needing_work()) == ["sesn_q", "sesn_run"]  # u2 is queued
    store.append("sesn_q", [event("u2", "user.interrupt", "2026-01-01T00:00:00Z")])
    store.update("session", A, "sesn_run", resource("sesn_run", status="idle"))
    assert store.sessions_needing_work() == []
    store.acquire_lease("sesn_idle", "w1", 0.01)  # an expired lease doesn't hide work
    store.update("session", A, "sesn_idle", resource("sesn_idle", status="running"))
    time.sleep(0.02)
    assert store.sessions_needing_work() == ["sesn_idle"]


# Outbox ---------------------------------------------------------------------------------
def test_outbox_retry_flow(store: SqliteStore) -> None:
    before = time.time()
    store.enqueue_delivery(A, "wh_1", {"type": "session.status_idle", "n": 1})
    store.enqueue_delivery(B, "wh_2", {"n": 2})
    assert store.due_deliveries(before - 1) == []
    due = store.due_deliveries(time.time())
    assert [(d["owner"], d["endpoint_id"], d["payload"]) for d in due] == [
        (A, "wh_1", {"type": "session.status_idle", "n": 1}), (B, "wh_2", {"n": 2})]
    first, second = due
    assert first["id"] != second["id"] and first["id"].startswith("dlv_")
    assert first["attempts"] == 0 and first["last_error"] is None
    assert len(store.due_deliveries(time.time(), limit=1)) == 1

    now = time.time()
    store.delivery_failed(first["id"], now + 60, "HTTP 503")
    store.delivery_done(second["id"])
    assert store.due_deliveries(now + 59) == []
    (retry,) = store.due_deliveries(now + 60)
    assert (retry["id"], retry["attempts"], retry["last_error"]) == (first["id"], 1, "HTTP 503")
    store.delivery_failed(first["id"], None, "HTTP 410: giving up")
    assert store.due_deliveries(now + 10_000) == []


# Files and processes --------------------------------------------------------------------
def test_durability_settings_and_reopen(path: Path) -> None:
    store = SqliteStore(path)
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store._db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.create("agent", A, resource("agent_1"))
    store.append("sesn_1", [event("e1")])
    store.close()
    again = SqliteStore(path)  # an existing file is opened, not re-created
    assert again.get("agent", A, "agent_1") is not None
    assert again.last_seq("sesn_1") == 1
    again._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    again.close()
    with pytest.raises(RuntimeError, match="newer"):
        SqliteStore(path)


def test_store_refuses_use_in_a_forked_child(store: SqliteStore) -> None:
    store._pid = -1  # what a forked child would see
    with pytest.raises(RuntimeError, match="fork"):
        store.last_seq("sesn_1")


APPENDER = """
    import sys, time
    from pathlib import Path
    from wisp.serve.store.sqlite import SqliteStore
    path, worker, go = sys.argv[1:]
    store = SqliteStore(path)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    for i in range(200):
        store.append("sesn_1", [{"id": f"{worker}-{i}", "type": "agent.message",
                                 "processed_at": None}])
    store.close()
"""


def test_append_is_gap_free_across_processes(path: Path, tmp_path: Path) -> None:
    SqliteStore(path).close()  # create the schema before the race
    go = tmp_path / "go"
    children = [python(APPENDER, str(path), f"w{n}", str(go)) for n in range(4)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()  # all four start appending at once
    for child in children:
        assert child.wait(timeout=60) == 0

    store = SqliteStore(path)
    log = store.log("sesn_1", limit=10_000)
    assert [e["seq"] for e in log] == list(range(1, 801))
    assert len({e["id"] for e in log}) == 800
    for n in range(4):  # each writer's own appends stay in its order
        mine = [int(e["id"].split("-")[1]) for e in log if e["id"].startswith(f"w{n}-")]
        assert mine == list(range(200))
    assert store.last_seq("sesn_1") == 800
    assert len(store.events("sesn_1", limit=1000, page=None).items) == 800
    store.close()


LEASER = """
    import sys, time
    from pathlib import Path
    from wisp.serve.store.sqlite import SqliteStore
    path, worker, go = sys.argv[1:]
    store = SqliteStore(path)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.0005)
    print(store.acquire_lease("sesn_1", worker, 30), flush=True)
    store.close()
"""


def test_lease_is_exclusive_across_processes(path: Path, tmp_path: Path) -> None:
    SqliteStore(path).close()
    go = tmp_path / "go"
    children = [python(LEASER, str(path), f"w{n}", str(go)) for n in range(2)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()
    results = []
    for child in children:
        out, _ = child.communicate(timeout=30)
        results.append(out.strip())
    assert sorted(results) == ["False", "True"]
    holder = f"w{results.index('True')}"

    store = SqliteStore(path)
    assert not store.acquire_lease("sesn_1", "parent", 30)
    assert not store.renew_lease("sesn_1", "parent", 30)
    assert store.renew_lease("sesn_1", holder, 30)  # the lease lives in the file
    store.release_lease("sesn_1", holder)
    assert store.acquire_lease("sesn_1", "parent", 30)
    store.close()


DYING_WRITER = """
    import sys, time
    from wisp.serve.store.sqlite import SqliteStore
    store = SqliteStore(sys.argv[1])
    store.append("sesn_1", [{"id": "sevt_1", "type": "user.message", "processed_at": None,
                             "content": [{"type": "text", "text": "keep me"}]}])
    print("acked", flush=True)
    time.sleep(60)
"""


def test_acknowledged_append_survives_kill_9(path: Path) -> None:
    child = python(DYING_WRITER, str(path))
    assert child.stdout is not None and child.stdout.readline() == "acked\n"
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=10) == -signal.SIGKILL

    store = SqliteStore(path)
    (entry,) = store.log("sesn_1")
    assert entry["seq"] == 1
    assert entry["content"] == [{"type": "text", "text": "keep me"}]
    assert store.sessions_needing_work() == ["sesn_1"]  # a crash leaves the work findable
    store.close()


def test_the_lease_fences_a_workers_appends(store: SqliteStore) -> None:
    check_the_lease_fences_appends(store)
