"""What only SqliteStore has, beyond the `base.Store` contract that
tests/serve/test_store_contract.py checks on both stores: its durability settings and
schema version, and the promises that need other processes to check: gap-free seqs under
concurrent writers, exclusive leases, and an acknowledged append surviving `kill -9`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
