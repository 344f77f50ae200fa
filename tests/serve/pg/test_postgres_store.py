"""What only PostgresStore has, beyond the `base.Store` contract that
tests/serve/test_store_contract.py checks on both stores: a failed append leaving no
trace, schemas and reconnecting, the promises that need other processes to check (gap-
free seqs under concurrent writers, followers never seeing a gap, exclusive leases and
claims, an acknowledged append surviving `kill -9`, a status change waiting on a
document's `modify`), and LISTEN/NOTIFY wake-ups across connections."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.waits import wait_until
from wisp.serve.store.pg_schema import SCHEMA_VERSION
from wisp.serve.store.postgres import PostgresStore

JSON = dict[str, Any]
A, B = "owner-a", "owner-b"


@pytest.fixture
def store(dsn: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(dsn)
    yield opened
    opened.close()


def dbname(dsn: str) -> str:
    return urlsplit(dsn).path.lstrip("/")


def resource(rid: str, **fields: Any) -> JSON:
    return {"id": rid, "created_at": "2026-01-01T00:00:00Z", "archived_at": None, **fields}


def event(eid: str, etype: str = "agent.message", processed_at: str | None = None,
          **fields: Any) -> JSON:
    return {"id": eid, "type": etype, "processed_at": processed_at, **fields}


def python(script: str, *args: str, **popen: Any) -> subprocess.Popen[str]:
    """A child process running `script` against the store (its own connection)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args],
                            text=True, stdout=subprocess.PIPE, **popen)


def test_a_failed_append_writes_nothing(store: PostgresStore,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    import wisp.serve.store.postgres as pg

    store.append("sesn_1", [event("e1")])
    with pytest.raises(TypeError):  # cannot be encoded: nothing of it is written
        store.append("sesn_1", [event("e2"), {**event("e3"), "bad": {1}}])
    # Two deliveries under one id: the append fails inside the transaction, after its
    # events, conversation and counter were written.
    monkeypatch.setattr(pg, "_delivery_rows", lambda rows, now: [
        ("dlv_same", o, e, pg.dumps(p), now, now) for o, e, p in rows])
    with pytest.raises(psycopg.errors.UniqueViolation):
        store.append("sesn_1", [event("e4")], conversation=(0, [{"a": 1}]),
                     deliveries=[("o", "whep", {"n": 1}), ("o", "whep", {"n": 2})])
    assert [e["id"] for e in store.log("sesn_1")] == ["e1"]
    assert store.conversation("sesn_1") == []
    assert store.due_deliveries(time.time() + 1) == []
    assert store.last_seq("sesn_1") == 1
    assert store.append("sesn_1", [event("e5")])[0]["seq"] == 2  # no gap left behind



def test_a_status_change_waits_for_a_usage_write_and_both_are_kept(
        store: PostgresStore, dsn: str) -> None:
    """The worker's status change (`append(..., status=...)`) and a usage write to the
    same session document (`modify`, as `budget.account` makes it) from two connections:
    the status change waits on the row lock the usage write holds, so neither document
    write overwrites the other. Deterministic: the usage write is held open until the
    status change is seen waiting for its lock."""
    import psycopg

    store.create("session", A, resource("sesn_1", status="idle", usage={"input_tokens": 0}))
    worker = PostgresStore(dsn)  # another process's connections
    inside, release = threading.Event(), threading.Event()

    def add_usage(doc: JSON) -> JSON:
        inside.set()
        assert release.wait(30)
        return {**doc, "usage": {"input_tokens": doc["usage"]["input_tokens"] + 5}}

    usage = threading.Thread(target=store.modify, args=("session", A, "sesn_1", add_usage))
    usage.start()
    try:
        assert inside.wait(30)
        status = threading.Thread(target=worker.append, args=(
            "sesn_1", [event("e1", "session.status_running")]), kwargs={"status": "running"})
        status.start()
        with psycopg.connect(dsn, autocommit=True) as watcher:
            def waiting_on_a_lock() -> bool:
                row = watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE datname ="
                                      " current_database() AND wait_event_type = 'Lock'"
                                      ).fetchone()
                return row is not None and row[0] > 0
            # (Had the usage write taken no lock, the status change would just finish.)
            wait_until(lambda: waiting_on_a_lock() or not status.is_alive(),
                       "the status change to wait on the session's row lock")
    finally:
        release.set()
        usage.join(30)
    status.join(30)
    worker.close()
    assert not usage.is_alive() and not status.is_alive()
    got = store.get("session", A, "sesn_1") or {}
    assert (got["status"], got["usage"]) == ("running", {"input_tokens": 5})
    assert [e["type"] for e in store.log("sesn_1")] == ["session.status_running"]

CLAIMER = """
    import json, sys, time
    from pathlib import Path
    from wisp.serve.store.postgres import PostgresStore
    dsn, go = sys.argv[1:]
    store = PostgresStore(dsn)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    got = []
    for _ in range(50):
        got += [r["id"] for r in store.claim_deliveries(time.time(), 300, limit=3)]
    print(json.dumps(got), flush=True)
    store.close()
"""


def test_claims_never_overlap_across_processes(store: PostgresStore, dsn: str,
                                               tmp_path: Path) -> None:
    import json

    for n in range(120):
        store.enqueue_delivery("o", "whep_1", {"n": n})
    go = tmp_path / "go"
    children = [python(CLAIMER, dsn, str(go)) for _ in range(3)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()
    claimed: list[str] = []
    for child in children:
        out, _ = child.communicate(timeout=60)
        claimed += json.loads(out)
    assert len(claimed) == len(set(claimed)) == 120


# Schema and connections ------------------------------------------------------------------
def test_schema_version_and_reopen(dsn: str) -> None:
    store = PostgresStore(dsn)
    store.create("agent", A, resource("agent_1"))
    store.append("sesn_1", [event("e1")])
    with store._read() as cur:
        assert cur.execute("SELECT version FROM wisp_schema").fetchone() == (SCHEMA_VERSION,)
    store.close()
    again = PostgresStore(dsn)
    assert again.get("agent", A, "agent_1") is not None
    assert again.last_seq("sesn_1") == 1
    with again._write() as cur:
        cur.execute("UPDATE wisp_schema SET version = %s", (SCHEMA_VERSION + 1,))
    again.close()
    with pytest.raises(RuntimeError, match="newer"):
        PostgresStore(dsn)


def test_stores_in_other_schemas_are_apart(dsn: str) -> None:
    one, two = PostgresStore(dsn), PostgresStore(dsn, schema="other")
    try:
        one.append("sesn_1", [event("e1")])
        assert two.last_seq("sesn_1") == 0
    finally:
        one.close()
        two.close()
    with pytest.raises(ValueError):
        PostgresStore(dsn, schema="x; DROP TABLE log")


def test_a_broken_connection_is_replaced(store: PostgresStore, pg_server: Any) -> None:
    import psycopg

    store.append("sesn_1", [event("e1")])
    with psycopg.connect(pg_server.dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE application_name = 'wisp serve' AND datname = %s",
                      (dbname(store.dsn),))
    with pytest.raises(psycopg.OperationalError):
        store.last_seq("sesn_1")  # this call saw it break …
    assert store.last_seq("sesn_1") == 1  # … the next one reconnects


# LISTEN / NOTIFY ------------------------------------------------------------------------
class Heard:
    def __init__(self) -> None:
        self.appends: list[tuple[str, int, bool]] = []
        self.outbox = 0
        self.lost = 0
        self.changed = threading.Condition()

    def append(self, session_id: str, seq: int, queued: bool) -> None:
        with self.changed:
            self.appends.append((session_id, seq, queued))
            self.changed.notify_all()

    def on_outbox(self) -> None:
        with self.changed:
            self.outbox += 1
            self.changed.notify_all()

    def on_lost(self) -> None:
        with self.changed:
            self.lost += 1
            self.changed.notify_all()

    def wait(self, check: Any, timeout: float = 10.0) -> None:
        with self.changed:
            assert self.changed.wait_for(check, timeout), self.appends


def test_appends_wake_listeners_of_other_connections(store: PostgresStore, dsn: str) -> None:
    heard = Heard()
    listener = store.listen(heard.append, session_ids={"sesn_1", "sesn_2"},
                            on_outbox=heard.on_outbox)
    writer = PostgresStore(dsn)  # as if another process
    try:
        assert listener.ready.wait(10)
        writer.append("sesn_1", [event("a1"), event("a2")], sync=False)
        writer.append("sesn_3", [event("x")])  # not listened to
        writer.append("sesn_2", [event("u1", "user.message")])
        heard.wait(lambda: len(heard.appends) >= 2)
        assert heard.appends == [("sesn_1", 2, False), ("sesn_2", 1, True)]
        with pytest.raises(TypeError):  # rolled back: nobody is told
            writer.append("sesn_1", [event("a3"), {**event("a4"), "bad": {1}}])
        writer.append("sesn_1", [], conversation=(0, [{"role": "user", "content": "x"}]))
        writer.append("sesn_1", [event("a3")], deliveries=[("o", "whep", {"n": 1})])
        heard.wait(lambda: len(heard.appends) >= 3 and heard.outbox >= 1)
        assert heard.appends[2:] == [("sesn_1", 3, False)]
        assert listener.session_ids is not None
        listener.session_ids.add("sesn_3")  # the filter can change while it runs
        writer.append("sesn_3", [event("y")])
        heard.wait(lambda: len(heard.appends) >= 4)
        assert heard.appends[3] == ("sesn_3", 2, False)
    finally:
        listener.close()
        writer.close()


def test_a_listener_reconnects_and_says_it_may_have_missed_some(
        store: PostgresStore, pg_server: Any) -> None:
    import psycopg

    heard = Heard()
    listener = store.listen(heard.append, on_lost=heard.on_lost)
    try:
        assert listener.ready.wait(10)
        with psycopg.connect(pg_server.dsn(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE query LIKE 'LISTEN%%' AND datname = %s",
                          (dbname(store.dsn),))
        heard.wait(lambda: heard.lost >= 1)
        assert listener.ready.wait(10)
        store.append("sesn_1", [event("a1")])
        heard.wait(lambda: heard.appends == [("sesn_1", 1, False)])
    finally:
        listener.close()


# Processes ------------------------------------------------------------------------------
APPENDER = """
    import sys, time
    from pathlib import Path
    from wisp.serve.store.postgres import PostgresStore
    dsn, worker, go = sys.argv[1:]
    store = PostgresStore(dsn)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    for i in range(200):
        store.append("sesn_1", [{"id": f"{worker}-{i}", "type": "agent.message",
                                 "processed_at": None}], sync=i % 2 == 0)
        store.append(f"sesn_{worker}", [{"id": f"{worker}-own-{i}", "type": "agent.message",
                                          "processed_at": None}])
    store.close()
"""

FOLLOWER = """
    import sys, time
    from pathlib import Path
    from wisp.serve.store.postgres import PostgresStore
    dsn, go, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = PostgresStore(dsn)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    after, reads, deadline = 0, 0, time.time() + 60
    while after < total and time.time() < deadline:
        entries = store.log("sesn_1", after)
        reads += 1
        for entry in entries:  # each read must continue exactly where the last ended
            if entry["seq"] != after + 1:
                print(f"gap: after {after} came {entry['seq']}", flush=True)
                sys.exit(1)
            after = entry["seq"]
    print(after, reads, flush=True)
"""


def test_append_is_gap_free_across_processes(store: PostgresStore, dsn: str,
                                             tmp_path: Path) -> None:
    go = tmp_path / "go"
    writers = [python(APPENDER, dsn, f"w{n}", str(go)) for n in range(4)]
    follower = python(FOLLOWER, dsn, str(go), "800")
    for child in [*writers, follower]:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()
    for child in writers:
        assert child.wait(timeout=120) == 0
    out, _ = follower.communicate(timeout=120)
    assert follower.returncode == 0, out
    assert out.split()[0] == "800"  # it saw every seq, in order, never past a gap

    log = store.log("sesn_1", limit=10_000)
    assert [e["seq"] for e in log] == list(range(1, 801))
    assert len({e["id"] for e in log}) == 800
    for n in range(4):
        mine = [int(e["id"].split("-")[1]) for e in log if e["id"].startswith(f"w{n}-")]
        assert mine == list(range(200))
        assert [e["seq"] for e in store.log(f"sesn_w{n}")] == list(range(1, 201))
    assert store.last_seq("sesn_1") == 800
    assert len(store.events("sesn_1", limit=1000, page=None).items) == 800


LEASER = """
    import sys, time
    from pathlib import Path
    from wisp.serve.store.postgres import PostgresStore
    dsn, worker, go = sys.argv[1:]
    store = PostgresStore(dsn)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.0005)
    print(store.acquire_lease("sesn_1", worker, 30), flush=True)
    store.close()
"""


def test_lease_is_exclusive_across_processes(store: PostgresStore, dsn: str,
                                             tmp_path: Path) -> None:
    go = tmp_path / "go"
    children = [python(LEASER, dsn, f"w{n}", str(go)) for n in range(3)]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    go.touch()
    results = []
    for child in children:
        out, _ = child.communicate(timeout=30)
        results.append(out.strip())
    assert sorted(results) == ["False", "False", "True"]
    holder = f"w{results.index('True')}"
    assert not store.acquire_lease("sesn_1", "parent", 30)
    assert store.renew_lease("sesn_1", holder, 30)
    store.release_lease("sesn_1", holder)
    assert store.acquire_lease("sesn_1", "parent", 30)


DYING_WRITER = """
    import sys, time
    from wisp.serve.store.postgres import PostgresStore
    store = PostgresStore(sys.argv[1])
    store.append("sesn_1", [{"id": "sevt_1", "type": "user.message", "processed_at": None,
                             "content": [{"type": "text", "text": "keep me"}]}])
    print("acked", flush=True)
    time.sleep(60)
"""


def test_acknowledged_append_survives_kill_9(store: PostgresStore, dsn: str) -> None:
    child = python(DYING_WRITER, dsn)
    assert child.stdout is not None and child.stdout.readline() == "acked\n"
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=10) == -signal.SIGKILL
    (entry,) = store.log("sesn_1")
    assert entry["seq"] == 1
    assert entry["content"] == [{"type": "text", "text": "keep me"}]
    assert store.sessions_needing_work() == ["sesn_1"]


def test_previews_are_watched_and_published_across_connections(store: PostgresStore,
                                                               dsn: str) -> None:
    got: list[tuple[str, str, JSON]] = []
    arrived = threading.Event()

    def on_preview(session_id: str, sender: str, event: JSON) -> None:
        got.append((session_id, sender, event))
        arrived.set()

    listener = store.listen(lambda *_: None, on_preview=on_preview)
    worker = PostgresStore(dsn)  # as if the process running the turn
    try:
        assert listener.ready.wait(10)
        assert not worker.previews_watched("sesn_1")
        store.watch_previews("sesn_1", "api-1", 0.3)
        assert worker.previews_watched("sesn_1")
        assert not worker.previews_watched("sesn_1", besides="api-1")  # its own watch
        assert not worker.previews_watched("sesn_2")
        delta = {"type": "event_delta", "event_id": "sevt_1", "delta": {"text": "hé"}}
        assert worker.publish_preview("sesn_1", "worker-1", delta)
        assert arrived.wait(10)
        assert got == [("sesn_1", "worker-1", delta)]
        assert not worker.publish_preview("sesn_1", "worker-1", {"text": "x" * 8000})
        time.sleep(0.4)
        assert not worker.previews_watched("sesn_1")  # expired
        store.watch_previews("sesn_1", "api-1", 30)
        store.unwatch_previews("sesn_1", "api-1")
        assert not worker.previews_watched("sesn_1")
    finally:
        listener.close()
        worker.close()
