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
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wisp.serve.store.base import JSON, Delivery, LeaseLost, Page
from wisp.serve.store.rows import (
    checked,
    descending,
    is_queued,
    loads,
    page_of,
    position,
    stored_time,
    time_key,
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

# A later form of an event replaces the earlier one in `latest` but keeps its position.
_UPSERT_LATEST = """
INSERT INTO latest (session_id, first_seq, event_id, seq, type, processed_at, queued)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id, event_id) DO UPDATE SET
    seq = excluded.seq, type = excluded.type, processed_at = excluded.processed_at,
    queued = excluded.queued
"""

_LATEST_BODY = "FROM latest e JOIN log l ON l.session_id = e.session_id AND l.seq = e.seq"

_NEEDING_WORK = """
SELECT s.id FROM (
    SELECT DISTINCT session_id AS id FROM latest WHERE queued = 1
    UNION
    SELECT id FROM resources WHERE kind = 'session' AND status = 'running'
) s
WHERE NOT EXISTS (SELECT 1 FROM leases WHERE session_id = s.id AND expires_at > ?)
LIMIT ?
"""

# Oldest due first; rowid (write order) breaks ties, so one event's deliveries, and
# deliveries released together, keep the order they were written in.
_DUE = """
SELECT id, owner, endpoint_id, payload, attempts, next_at, last_error FROM outbox
WHERE done = 0 AND next_at <= ? ORDER BY next_at, rowid LIMIT ?
"""

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class SqliteStore:
    """`base.Store` on one SQLite file; see the module docstring for the guarantees."""

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

    # Resources --------------------------------------------------------------------------
    def create(self, kind: str, owner: str, doc: JSON) -> JSON:
        with self._write() as db:
            db.execute("INSERT INTO resources (kind, id, owner, created_at, archived, status, "
                       "doc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (kind, doc["id"], owner, doc.get("created_at"), *_derived(doc),
                        _dumps(doc)))
        return doc

    def get(self, kind: str, owner: str, resource_id: str) -> JSON | None:
        with self._read() as db:
            row = db.execute("SELECT doc FROM resources WHERE kind = ? AND owner = ? AND id = ?",
                             (kind, owner, resource_id)).fetchone()
        return None if row is None else loads(row[0])

    def list(self, kind: str, owner: str, *, limit: int, page: str | None,
             order: str = "desc", include_archived: bool = False) -> Page:
        desc = descending(order)
        where = ["kind = ?", "owner = ?"]
        args: builtins.list[Any] = [kind, owner]
        if not include_archived:
            where.append("archived = 0")
        if page is not None:
            where.append("n < ?" if desc else "n > ?")
            args.append(position("r", page))
        sql = (f"SELECT n, doc FROM resources WHERE {' AND '.join(where)} "
               f"ORDER BY n {'DESC' if desc else 'ASC'} LIMIT ?")
        with self._read() as db:
            rows = db.execute(sql, [*args, checked(limit) + 1]).fetchall()
        return page_of(rows, limit, "r")

    def update(self, kind: str, owner: str, resource_id: str, doc: JSON) -> JSON | None:
        with self._write() as db:
            changed = db.execute("UPDATE resources SET archived = ?, status = ?, doc = ? "
                                 "WHERE kind = ? AND owner = ? AND id = ?",
                                 (*_derived(doc), _dumps(doc), kind, owner, resource_id))
        return doc if changed.rowcount else None

    def delete(self, kind: str, owner: str, resource_id: str) -> bool:
        with self._write() as db:
            deleted = db.execute("DELETE FROM resources WHERE kind = ? AND owner = ? AND id = ?",
                                 (kind, owner, resource_id)).rowcount > 0
            # A deleted session takes its log with it: otherwise its queued events would
            # keep it in `sessions_needing_work` forever.
            if deleted and kind == "session":
                for table in ("log", "latest", "leases", "conversation"):
                    db.execute(f"DELETE FROM {table} WHERE session_id = ?", (resource_id,))
        return deleted

    def owner_of(self, kind: str, resource_id: str) -> str | None:
        with self._read() as db:
            row = db.execute("SELECT owner FROM resources WHERE kind = ? AND id = ?",
                             (kind, resource_id)).fetchone()
        return None if row is None else str(row[0])

    # Event log --------------------------------------------------------------------------
    def append(self, session_id: str, events: builtins.list[JSON],
               conversation: tuple[int, builtins.list[JSON]] | None = None,
               status: str | None = None, sync: bool = True, *,
               deliveries: builtins.list[Delivery] | None = None,
               holder: str | None = None) -> builtins.list[JSON]:
        if not events and conversation is None and status is None and not deliveries:
            return []
        with self._write(sync) as db:
            if holder is not None:
                row = db.execute("SELECT worker FROM leases WHERE session_id = ?",
                                 (session_id,)).fetchone()
                if row is None or row[0] != holder:
                    raise LeaseLost(session_id, holder)
            last = _last_seq(db, session_id)
            stored = [{**event, "seq": last + i} for i, event in enumerate(events, 1)]
            db.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?)",
                           [(session_id, e["seq"], e["id"], e["type"], e.get("processed_at"),
                             _dumps(e)) for e in stored])
            db.executemany(_UPSERT_LATEST, [_latest_row(session_id, e) for e in stored])
            if conversation is not None:
                _save_conversation(db, session_id, *conversation)
            if status is not None:
                db.execute("UPDATE resources SET status = ?, doc = json_set(doc, '$.status', ?)"
                           " WHERE kind = 'session' AND id = ?", (status, status, session_id))
            if deliveries:
                _insert_deliveries(db, deliveries, time.time())
        return stored

    def queued(self, session_id: str) -> builtins.list[JSON]:
        with self._read() as db:
            rows = db.execute(f"SELECT l.body {_LATEST_BODY} WHERE e.session_id = ? "
                              "AND e.queued = 1 ORDER BY e.first_seq",
                              (session_id,)).fetchall()
        return [loads(row[0]) for row in rows]

    def conversation(self, session_id: str) -> builtins.list[JSON]:
        with self._read() as db:
            rows = db.execute("SELECT message FROM conversation WHERE session_id = ? "
                              "ORDER BY n", (session_id,)).fetchall()
        return [loads(row[0]) for row in rows]

    def log(self, session_id: str, after_seq: int = 0, limit: int = 1000) -> builtins.list[JSON]:
        with self._read() as db:
            rows = db.execute("SELECT body FROM log WHERE session_id = ? AND seq > ? "
                              "ORDER BY seq LIMIT ?", (session_id, after_seq, limit)).fetchall()
        return [loads(body) for body, in rows]

    def last_seq(self, session_id: str) -> int:
        with self._read() as db:
            return _last_seq(db, session_id)

    def events(self, session_id: str, *, limit: int, page: str | None, order: str = "asc",
               types: builtins.list[str] | None = None, created_gt: str | None = None,
               created_gte: str | None = None, created_lt: str | None = None,
               created_lte: str | None = None) -> Page:
        desc = descending(order)
        where = ["e.session_id = ?"]
        args: builtins.list[Any] = [session_id]
        if types:
            where.append(f"e.type IN ({', '.join('?' * len(types))})")
            args.extend(types)
        # NULL compares as neither greater nor smaller: unprocessed events drop out.
        for op, bound in ((">", created_gt), (">=", created_gte), ("<", created_lt),
                          ("<=", created_lte)):
            if bound is not None:
                where.append(f"e.processed_at {op} ?")
                args.append(time_key(bound))
        if page is not None:
            where.append("e.first_seq < ?" if desc else "e.first_seq > ?")
            args.append(position("e", page))
        sql = (f"SELECT e.first_seq, l.body {_LATEST_BODY} WHERE {' AND '.join(where)} "
               f"ORDER BY e.first_seq {'DESC' if desc else 'ASC'} LIMIT ?")
        with self._read() as db:
            rows = db.execute(sql, [*args, checked(limit) + 1]).fetchall()
        return page_of(rows, limit, "e")

    def event(self, session_id: str, event_id: str) -> JSON | None:
        with self._read() as db:
            row = db.execute(f"SELECT l.body {_LATEST_BODY} "
                             "WHERE e.session_id = ? AND e.event_id = ?",
                             (session_id, event_id)).fetchone()
        return None if row is None else loads(row[0])

    # Work -------------------------------------------------------------------------------
    # Expiry is wall-clock (`time.time()`): the workers comparing it are other processes.
    def acquire_lease(self, session_id: str, worker: str, ttl_s: float) -> bool:
        now = time.time()
        with self._write() as db:
            return db.execute(
                "INSERT INTO leases VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "worker = excluded.worker, expires_at = excluded.expires_at "
                "WHERE leases.expires_at <= ? OR leases.worker = excluded.worker",
                (session_id, worker, now + ttl_s, now)).rowcount > 0

    def renew_lease(self, session_id: str, worker: str, ttl_s: float) -> bool:
        # An expired lease nobody took is still ours: no other worker can have acted on it.
        with self._write() as db:
            return db.execute("UPDATE leases SET expires_at = ? WHERE session_id = ? "
                              "AND worker = ?",
                              (time.time() + ttl_s, session_id, worker)).rowcount > 0

    def lease_holders(self) -> builtins.list[tuple[str, str]]:
        with self._read() as db:
            rows = db.execute("SELECT session_id, worker FROM leases WHERE expires_at > ?",
                              (time.time(),)).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def lease_holder(self, session_id: str) -> str | None:
        with self._read() as db:
            row = db.execute("SELECT worker FROM leases WHERE session_id = ? AND "
                             "expires_at > ?", (session_id, time.time())).fetchone()
        return None if row is None else str(row[0])

    def release_lease(self, session_id: str, worker: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM leases WHERE session_id = ? AND worker = ?",
                       (session_id, worker))

    def sessions_needing_work(self, limit: int = 100) -> builtins.list[str]:
        with self._read() as db:
            rows = db.execute(_NEEDING_WORK, (time.time(), limit)).fetchall()
        return [str(session_id) for session_id, in rows]

    # Webhook outbox ---------------------------------------------------------------------
    def enqueue_delivery(self, owner: str, endpoint_id: str, payload: JSON) -> None:
        with self._write() as db:
            _insert_deliveries(db, [(owner, endpoint_id, payload)], time.time())

    def due_deliveries(self, now: float, limit: int = 50) -> builtins.list[JSON]:
        with self._read() as db:
            rows = db.execute(_DUE, (now, limit)).fetchall()
        return [_delivery(row) for row in rows]

    def claim_deliveries(self, now: float, lease_s: float, limit: int = 50
                         ) -> builtins.list[JSON]:
        # Read and push ahead in one write transaction: two deliverers cannot both read
        # a row as due. A plain read first spares the write lock when nothing is due (every
        # poll of every process). Outbox bookkeeping skips the fsync (`sync=False`): what
        # an OS crash could undo is a claim or an outcome, so a delivery is sent again,
        # which at-least-once allows.
        with self._read() as db:
            if db.execute(_DUE, (now, 1)).fetchone() is None:
                return []
        with self._write(sync=False) as db:
            rows = db.execute(_DUE, (now, limit)).fetchall()
            db.executemany("UPDATE outbox SET next_at = ? WHERE id = ?",
                           [(now + lease_s, row[0]) for row in rows])
        return [_delivery(row) for row in rows]

    def release_deliveries(self, delivery_ids: builtins.list[str], at: float) -> None:
        with self._write(sync=False) as db:
            db.executemany("UPDATE outbox SET next_at = ? WHERE id = ? AND done = 0",
                           [(at, delivery_id) for delivery_id in delivery_ids])

    def delivery_done(self, delivery_id: str) -> None:
        with self._write(sync=False) as db:
            db.execute("UPDATE outbox SET done = 1, attempts = attempts + 1 WHERE id = ?",
                       (delivery_id,))

    def delivery_failed(self, delivery_id: str, retry_at: float | None, error: str) -> None:
        # No retry time means giving up: the row is done, its last error kept for audit.
        # `done = 0`: a late report from a deliverer whose claim had expired must not
        # bring back a delivery that another one has since completed.
        with self._write(sync=False) as db:
            db.execute("UPDATE outbox SET attempts = attempts + 1, last_error = ?, "
                       "next_at = COALESCE(?, next_at), done = ? WHERE id = ? AND done = 0",
                       (error, retry_at, int(retry_at is None), delivery_id))

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


def _derived(doc: JSON) -> tuple[int, Any]:
    """The columns a resource's queries filter on: archived flag and status."""
    return int(doc.get("archived_at") is not None), doc.get("status")


def _save_conversation(db: sqlite3.Connection, session_id: str, start: int,
                       messages: list[JSON]) -> None:
    """The model conversation from index `start` on is `messages` (what was there from
    `start` on is replaced: a compaction rewrites it from 0)."""
    db.execute("DELETE FROM conversation WHERE session_id = ? AND n >= ?", (session_id, start))
    db.executemany("INSERT INTO conversation VALUES (?, ?, ?)",
                   [(session_id, start + i, _dumps(m)) for i, m in enumerate(messages)])


def _insert_deliveries(db: sqlite3.Connection, deliveries: list[Delivery], now: float) -> None:
    """Outbox rows, due at once; each gets the id every attempt to send it will carry."""
    db.executemany("INSERT INTO outbox (id, owner, endpoint_id, payload, next_at, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   [(f"dlv_{uuid.uuid4().hex}", owner, endpoint_id, _dumps(payload), now, now)
                    for owner, endpoint_id, payload in deliveries])


def _delivery(row: Any) -> JSON:
    return {"id": row[0], "owner": row[1], "endpoint_id": row[2], "payload": loads(row[3]),
            "attempts": row[4], "next_at": row[5], "last_error": row[6]}


def _last_seq(db: sqlite3.Connection, session_id: str) -> int:
    row = db.execute("SELECT MAX(seq) FROM log WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0] or 0)


def _latest_row(session_id: str, entry: JSON) -> tuple[Any, ...]:
    return (session_id, entry["seq"], entry["id"], entry["seq"], entry["type"],
            stored_time(entry.get("processed_at")), int(is_queued(entry)))


