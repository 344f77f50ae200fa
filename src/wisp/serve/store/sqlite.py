"""The embedded store: one SQLite file that every process of a deployment (API and worker
processes alike) opens with its own `SqliteStore`.

Durability and concurrency:
- WAL mode, so readers never wait for the writer and a commit is one append to the WAL.
- `synchronous=FULL`: every COMMIT fsyncs the WAL, so an acknowledged write survives a
  `kill -9` of the process and a power loss (NORMAL would survive only the former).
- Writes begin with `BEGIN IMMEDIATE`, taking the file's write lock before reading the
  last `seq`: two processes can never both read seq N and append N+1.
- Writers of all processes first queue on an `flock` of `<path>-lock`, which wakes the
  next one as soon as the lock is free; SQLite's own polling wait (`busy_timeout`, still
  set for anything else that writes the file) let a writer starve for hundreds of ms.

One connection per store object, used from one thread (the service's asyncio thread; a
lock makes other threads safe but serialised). Never share a store across processes: a
connection copied by `fork` shares SQLite's file locks with its parent and can corrupt
the file, so each process opens its own (a store refuses to run in a forked child).

Schema (`PRAGMA user_version` is its version, for future migrations):
- resources: one row per agent / environment / session document, `n` its creation order
  (what listings page by), `archived` and `status` copied out of the document for queries.
- log: the append-only event log, the whole entry as JSON in `body`.
- latest: one row per event id, pointing at its latest form in `log` and keyed by the seq
  of its first appearance: the event listing and `sessions_needing_work` read it, never
  a scan of the log.
- leases, outbox: worker leases and webhook deliveries (a claim is `next_at` pushed ahead).

Page cursors are opaque: URL-safe base64 of a tag and the last position returned (the
resource's `n`, the event's first seq). A malformed cursor raises ValueError.
"""

from __future__ import annotations

import builtins
import fcntl
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve.store.base import Delivery, LeaseLost
from wisp.serve.store.rows import is_queued, stored_time
from wisp.serve.store.sql import (
    LATEST_COLUMNS,
    LOG_COLUMNS,
    OUTBOX_COLUMNS,
    UPSERT_LATEST_TAIL,
    Dialect,
    SqlStore,
    delivery,
    dumps,
)

SCHEMA_VERSION = 1
# How long a writer waits for another process's write lock before failing. Transactions
# are a few fsyncs long, so this is only reached when something is badly wrong.
BUSY_TIMEOUT_S = 10.0

_SCHEMA = """
CREATE TABLE resources (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    created_at TEXT,
    archived INTEGER NOT NULL,
    status TEXT,
    doc TEXT NOT NULL,
    UNIQUE (kind, id)
);
CREATE INDEX resources_by_owner ON resources (kind, owner, n);
CREATE INDEX resources_by_status ON resources (kind, status);

CREATE TABLE log (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    processed_at TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE latest (
    session_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    processed_at TEXT,
    queued INTEGER NOT NULL,
    PRIMARY KEY (session_id, first_seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX latest_by_id ON latest (session_id, event_id);
CREATE INDEX latest_queued ON latest (session_id) WHERE queued = 1;

CREATE TABLE conversation (
    session_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, n)
) WITHOUT ROWID;

CREATE TABLE leases (
    session_id TEXT PRIMARY KEY,
    worker TEXT NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;

CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL,
    last_error TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX outbox_due ON outbox (next_at) WHERE done = 0;
"""

# `sql.Dialect.now` on SQLite: the host's wall clock, to the millisecond.
_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
SQLITE = Dialect(placeholder="?", true="1", false="0", now=_NOW,
                 session_tables=("log", "latest", "leases", "conversation"),
                 outbox_order="rowid")  # rowid: write order


class SqliteStore(SqlStore):
    """`base.Store` on one SQLite file; see the module docstring for the guarantees."""

    dialect = SQLITE

    def __init__(self, path: str | Path) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._write_lock = _open_write_lock(str(path))
        # isolation_level=None: the module issues no implicit BEGINs; we open each
        # transaction ourselves. `timeout` is SQLite's busy_timeout.
        self._db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        try:
            self._configure(str(path))
        except BaseException:
            self.close()
            raise

    def _configure(self, path: str) -> None:
        mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if self._write_lock is not None and mode != "wal":  # e.g. a network file system
            raise RuntimeError(f"{path}: SQLite cannot use WAL here (journal mode {mode})")
        self._db.execute("PRAGMA synchronous = FULL")
        self._synced = True
        # Keep a busy WAL from staying large on disk after checkpoints.
        self._db.execute("PRAGMA journal_size_limit = 67108864")
        self._migrate()

    def _migrate(self) -> None:
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RuntimeError(f"store schema {version} is newer than this wisp "
                                   f"({SCHEMA_VERSION})")
            if version == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # Transactions -----------------------------------------------------------------------
    @contextmanager
    def _write(self, sync: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the file's write lock from its first statement.
        `sync` False commits without waiting for the disk (see `append`)."""
        with self._lock:
            self._same_process()
            db = self._db
            if sync != self._synced:
                db.execute(f"PRAGMA synchronous = {'FULL' if sync else 'NORMAL'}")
                self._synced = sync
            with _held(self._write_lock):
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """Reads are single statements, each its own (snapshot) transaction."""
        with self._lock:
            self._same_process()
            yield self._db

    def _same_process(self) -> None:
        if os.getpid() != self._pid:
            raise RuntimeError("a SqliteStore cannot be used across fork: open one per process")

    # Event log --------------------------------------------------------------------------
    def append(self, session_id: str, events: builtins.list[JSON],
               conversation: tuple[int, builtins.list[JSON]] | None = None,
               status: str | None = None, sync: bool = True, *,
               deliveries: builtins.list[Delivery] | None = None,
               holder: str | None = None) -> builtins.list[JSON]:
        if not events and conversation is None and status is None and not deliveries:
            return []
        with self._write(sync) as db:
            if holder is not None and not self._fence(db, session_id, holder):
                raise LeaseLost(session_id, holder)
            last = _last_seq(db, session_id)
            stored = [{**event, "seq": last + i} for i, event in enumerate(events, 1)]
            db.executemany(f"INSERT INTO log {LOG_COLUMNS} VALUES (?, ?, ?, ?, ?, ?)",
                           [(session_id, e["seq"], e["id"], e["type"], e.get("processed_at"),
                             dumps(e)) for e in stored])
            db.executemany(f"INSERT INTO latest {LATEST_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?) "
                           f"{UPSERT_LATEST_TAIL}", [_latest_row(session_id, e) for e in stored])
            if conversation is not None:
                _save_conversation(db, session_id, *conversation)
            if status is not None:
                db.execute("UPDATE resources SET status = ?, doc = json_set(doc, '$.status', ?)"
                           " WHERE kind = 'session' AND id = ?", (status, status, session_id))
            if deliveries:
                _insert_deliveries(db, deliveries, time.time())
        return stored

    def last_seq(self, session_id: str) -> int:
        with self._read() as db:
            return _last_seq(db, session_id)

    # Webhook outbox ---------------------------------------------------------------------
    def enqueue_delivery(self, owner: str, endpoint_id: str, payload: JSON) -> None:
        with self._write() as db:
            _insert_deliveries(db, [(owner, endpoint_id, payload)], time.time())

    def claim_deliveries(self, now: float, lease_s: float, limit: int = 50
                         ) -> builtins.list[JSON]:
        # Read and push ahead in one write transaction (which holds the file's write lock):
        # two deliverers cannot both read a row as due. No fsync: see `SqlStore`'s outbox.
        if self._nothing_due(now):
            return []
        with self._write(sync=False) as db:
            rows = db.execute(self._due(), (now, limit)).fetchall()
            db.executemany("UPDATE outbox SET next_at = ? WHERE id = ?",
                           [(now + lease_s, row[0]) for row in rows])
        return [delivery(row) for row in rows]

    def close(self) -> None:
        self._db.close()
        if self._write_lock is not None:
            os.close(self._write_lock)
            self._write_lock = None


# Helpers ------------------------------------------------------------------------------
def _open_write_lock(path: str) -> int | None:
    """The sidecar file whose `flock` queues the writers of every process (none for an
    in-memory database). SQLite's own busy handler sleeps 1, 2, 5 … 100 ms between tries,
    so a writer that keeps waking to a taken lock waits hundreds of ms while the others
    write; waiting on the flock instead wakes within a fraction of a ms of its release."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return None
    return os.open(f"{path}-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


@contextmanager
def _held(fd: int | None) -> Iterator[None]:
    """Holds the write lock, waiting without a deadline: a holder that dies releases it
    (the kernel drops a dead process's flocks); one that hangs mid-transaction holds
    SQLite's write lock too, so writers would stall either way (here they wait, where
    busy_timeout alone would fail them after BUSY_TIMEOUT_S)."""
    if fd is None:
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _save_conversation(db: sqlite3.Connection, session_id: str, start: int,
                       messages: list[JSON]) -> None:
    """The model conversation from index `start` on is `messages` (what was there from
    `start` on is replaced: a compaction rewrites it from 0)."""
    db.execute("DELETE FROM conversation WHERE session_id = ? AND n >= ?", (session_id, start))
    db.executemany("INSERT INTO conversation VALUES (?, ?, ?)",
                   [(session_id, start + i, dumps(m)) for i, m in enumerate(messages)])


def _insert_deliveries(db: sqlite3.Connection, deliveries: list[Delivery], now: float) -> None:
    """Outbox rows, due at once; each gets the id every attempt to send it will carry."""
    db.executemany(f"INSERT INTO outbox {OUTBOX_COLUMNS} VALUES (?, ?, ?, ?, ?, ?)",
                   [(f"dlv_{uuid.uuid4().hex}", owner, endpoint_id, dumps(payload), now, now)
                    for owner, endpoint_id, payload in deliveries])


def _last_seq(db: sqlite3.Connection, session_id: str) -> int:
    row = db.execute("SELECT MAX(seq) FROM log WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0] or 0)


def _latest_row(session_id: str, entry: JSON) -> tuple[Any, ...]:
    return (session_id, entry["seq"], entry["id"], entry["seq"], entry["type"],
            stored_time(entry.get("processed_at")), int(is_queued(entry)))


