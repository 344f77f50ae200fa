"""The scale-out store: `base.Store` on PostgreSQL (psycopg 3), with the same semantics
as `SqliteStore`, for a deployment of several API and worker processes on any hosts.

PROTOTYPE: not wired into `wisp serve` yet (see docs/serve-scale-out.md).

Durability and concurrency:
- Every method is one transaction (or one autocommit statement for reads). A client's
  append commits with `synchronous_commit` on (the server's default): once it returns, it
  survives a crash of any process, the database server included. `sync=False` appends
  (the service's own events) commit with `SET LOCAL synchronous_commit = off`: a crashed
  *server* may lose a suffix of them, which the log being prefix-consistent makes the
  same as a crash a moment earlier (as in SQLite).
- Gap-free per-session `seq`: an append bumps the session's row in `counters`
  (`INSERT … ON CONFLICT DO UPDATE … RETURNING`), which row-locks it until commit, so the
  appenders of one session queue on that row while other sessions' appends run in
  parallel (SQLite serialises every writer). A rolled-back append rolls its bump back
  too: no gap. Postgres makes a transaction visible before it releases its locks, so
  appends of one session become visible in seq order: a follower that reads seq N has
  every seq below it.
- Lease expiry uses the database server's clock (`clock_timestamp()`), one clock for
  every worker on every host; the outbox keeps the caller's `now` as the contract says.
- Claims use `FOR UPDATE SKIP LOCKED`: concurrent deliverers never wait on each other and
  never claim one row twice.

Waking followers in other processes (what SQLite leaves to polling): an append that
writes events also sends `NOTIFY wisp_log, '<session_id> <last seq> <queued>'` in its
transaction (delivered at commit, in commit order, never for a rolled-back append);
`queued` is 1 when a client event was queued (what a worker wants to hear).
Deliveries send `NOTIFY wisp_outbox`. `PostgresStore.listen` starts a
`pg_listener.Listener`: a thread with its own connection that calls back for each
notification, and calls `on_lost` when its connection broke (notifications may have been
missed: followers re-read the log, which is what the polling fallback does anyway).

A small pool of connections per store object (`pg_connections.Connections`), each used by
one thread at a time, and a thread pool (`blocking_executor`) that async code runs its
calls on (`wisp.serve.store.offload`), so a slow query never stalls the event loop; like
`SqliteStore`, a store refuses to be used in a forked child. A broken connection is
replaced at the next call (the call that saw it break raises).

Schema (`pg_schema`: `wisp_schema.version`, in the `wisp` schema unless told otherwise):
the same tables as SQLite's (resources, log, latest, conversation, leases, outbox) plus
`counters` (last seq per session). JSON documents are `text`, not `jsonb`, so they come
back with their keys in the order they were written. Text that is compared as time is
`COLLATE "C"` (byte order, whatever the database's locale).
"""

from __future__ import annotations

import builtins
import os
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.serve.store.base import Delivery, LeaseLost
from wisp.serve.store.pg_connections import Connections, connect
from wisp.serve.store.pg_listener import LOG_CHANNEL, OUTBOX_CHANNEL, PREVIEW_CHANNEL, Listener
from wisp.serve.store.pg_schema import migrate
from wisp.serve.store.rows import is_queued, loads, stored_time
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

if TYPE_CHECKING:
    import psycopg

PREVIEW_PAYLOAD_MAX = 7900  # NOTIFY's payload limit is 8000 bytes

THREADS = 8  # calls from async code at once (`offload`), each on its own connection
LOOP_CONNECTIONS = 4  # connections beyond those, for calls still made on the event loop
_NOW = "extract(epoch FROM clock_timestamp())"

POSTGRES = Dialect(placeholder="%s", true="TRUE", false="FALSE", now=_NOW,
                   session_tables=("log", "latest", "leases", "conversation", "counters"),
                   outbox_order="n", for_share="FOR SHARE",
                   for_update="FOR UPDATE")

# Rows locked by another claim in flight are skipped, not waited for; a row whose claim
# committed meanwhile is re-checked against `next_at` and dropped.
_CLAIM = """
WITH due AS (
    SELECT id, owner, endpoint_id, payload, attempts, next_at, last_error, n FROM outbox
    WHERE NOT done AND next_at <= %s ORDER BY next_at, n LIMIT %s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE outbox o SET next_at = %s FROM due WHERE o.id = due.id
)
SELECT id, owner, endpoint_id, payload, attempts, next_at, last_error FROM due
ORDER BY next_at, n
"""

class PostgresStore(SqlStore):
    """`base.Store` on PostgreSQL; see the module docstring for the guarantees."""

    dialect = POSTGRES

    def __init__(self, dsn: str, *, schema: str = "wisp", connect_timeout: float = 10.0,
                 threads: int = THREADS) -> None:
        if not schema.isidentifier():
            raise ValueError(f"schema must be a plain identifier, not {schema!r}")
        self.dsn = dsn
        self.schema = schema
        self._connect_timeout = connect_timeout
        self._pid = os.getpid()
        # Calls from async code run on these threads (`wisp.serve.store.offload`); the
        # pool has room for them plus a few callers on the event loop itself.
        self.blocking_executor = ThreadPoolExecutor(threads, thread_name_prefix="wisp-pg")
        self._pool = Connections(self._open, threads + LOOP_CONNECTIONS)
        self._migrate()

    # Connections ------------------------------------------------------------------------
    def _open(self) -> psycopg.Connection[Any]:
        conn = connect(self.dsn, self._connect_timeout)
        conn.execute(f"SET search_path TO {self.schema}")
        return conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if os.getpid() != self._pid:
            raise RuntimeError("a PostgresStore cannot be used across fork: open one per "
                               "process")
        with self._pool.borrowed() as conn:
            yield conn

    @contextmanager
    def _write(self, sync: bool = True) -> Iterator[psycopg.Cursor[Any]]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            if not sync:
                cur.execute("SET LOCAL synchronous_commit = off")
            yield cur

    @contextmanager
    def _read(self) -> Iterator[psycopg.Cursor[Any]]:
        """Reads are single statements, each its own (snapshot) transaction."""
        with self._connection() as conn, conn.cursor() as cur:
            yield cur

    def _migrate(self) -> None:
        conn = connect(self.dsn, self._connect_timeout)
        migrate(conn, self.schema)
        conn.execute(f"SET search_path TO {self.schema}")
        self._pool.add(conn)

    # Event log --------------------------------------------------------------------------
    def append(self, session_id: str, events: builtins.list[JSON],
               conversation: tuple[int, builtins.list[JSON]] | None = None,
               status: str | None = None, sync: bool = True, *,
               deliveries: builtins.list[Delivery] | None = None,
               holder: str | None = None) -> builtins.list[JSON]:
        if not events and conversation is None and status is None and not deliveries:
            return []
        # Everything that can fail to encode fails before the transaction starts.
        bodies = [dumps(e) for e in events]
        messages = ([dumps(m) for m in conversation[1]] if conversation is not None
                    else None)
        outbox = _delivery_rows(deliveries or [], time.time())
        with self._write(sync) as cur:
            if holder is not None and not self._fence(cur, session_id, holder):
                raise LeaseLost(session_id, holder)
            stored: builtins.list[JSON] = []
            if events:
                last = _bump(cur, session_id, len(events)) - len(events)
                stored = [{**event, "seq": last + i} for i, event in enumerate(events, 1)]
                # The body is written without `seq` in it: the column is the truth.
                _insert_rows(cur, f"INSERT INTO log {LOG_COLUMNS}", [
                    (session_id, e["seq"], e["id"], e["type"], e.get("processed_at"), body)
                    for e, body in zip(stored, bodies, strict=True)])
                latest = _latest_rows(session_id, stored)
                _insert_rows(cur, f"INSERT INTO latest {LATEST_COLUMNS}", latest,
                             UPSERT_LATEST_TAIL)
                queued = any(row[-1] for row in latest)
                cur.execute("SELECT pg_notify(%s, %s)",
                            (LOG_CHANNEL, f"{session_id} {stored[-1]['seq']} {int(queued)}"))
            if conversation is not None and messages is not None:
                _save_conversation(cur, session_id, conversation[0], messages)
            if status is not None:
                _set_status(cur, session_id, status)
            if outbox:
                _insert_deliveries(cur, outbox)
        return stored

    def last_seq(self, session_id: str) -> int:
        with self._read() as cur:
            row = cur.execute("SELECT last_seq FROM counters WHERE session_id = %s",
                              (session_id,)).fetchone()
        return 0 if row is None else int(row[0])

    # Webhook outbox ---------------------------------------------------------------------
    def enqueue_delivery(self, owner: str, endpoint_id: str, payload: JSON) -> None:
        rows = _delivery_rows([(owner, endpoint_id, payload)], time.time())
        with self._write() as cur:
            _insert_deliveries(cur, rows)

    def claim_deliveries(self, now: float, lease_s: float, limit: int = 50
                         ) -> builtins.list[JSON]:
        # No synchronous commit: see `SqlStore`'s outbox.
        if self._nothing_due(now):
            return []
        with self._write(sync=False) as cur:
            rows = cur.execute(_CLAIM, (now, limit, now + lease_s)).fetchall()
        return [delivery(row) for row in rows]

    # Waking other processes -------------------------------------------------------------
    # Previews across processes (never stored: they travel by NOTIFY) ----------------------

    def watch_previews(self, session_id: str, watcher: str, ttl_s: float) -> None:
        """`watcher` streams previews of the session for `ttl_s` more seconds."""
        with self._write() as cur:
            cur.execute(f"INSERT INTO preview_watch VALUES (%s, %s, {_NOW} + %s) "
                        "ON CONFLICT (session_id, watcher) DO UPDATE SET "
                        "expires_at = excluded.expires_at", (session_id, watcher, ttl_s))

    def unwatch_previews(self, session_id: str, watcher: str) -> None:
        with self._write() as cur:
            cur.execute("DELETE FROM preview_watch WHERE session_id = %s AND watcher = %s",
                        (session_id, watcher))

    def previews_watched(self, session_id: str, *, besides: str = "") -> bool:
        """Whether a process other than `besides` streams the session's previews."""
        with self._read() as cur:
            return cur.execute(f"SELECT 1 FROM preview_watch WHERE session_id = %s AND "
                               f"watcher <> %s AND expires_at > {_NOW} LIMIT 1",
                               (session_id, besides)).fetchone() is not None

    def publish_preview(self, session_id: str, sender: str, event: JSON) -> bool:
        """Sends a preview to the processes that stream it; False when it is too large
        for a notification (previews are best effort: the complete event follows)."""
        payload = f"{session_id} {sender} {dumps(event)}"
        if len(payload.encode()) > PREVIEW_PAYLOAD_MAX:
            return False
        with self._read() as cur:
            cur.execute("SELECT pg_notify(%s, %s)", (PREVIEW_CHANNEL, payload))
        return True

    def listen(self, on_append: Callable[[str, int, bool], None], *,
               session_ids: set[str] | None = None,
               on_outbox: Callable[[], None] | None = None,
               on_lost: Callable[[], None] | None = None,
               on_preview: Callable[[str, str, JSON], None] | None = None) -> Listener:
        """Starts a `Listener` calling `on_append(session_id, last_seq, queued)` for every
        append committed by any process (only for `session_ids` when given; the set may
        be changed while it runs), `on_outbox()` when deliveries were queued, and
        `on_lost()` after its connection broke (it reconnects by itself), and
        `on_preview(session_id, sender, event)` for published previews. Callbacks run on
        the listener's thread: an asyncio program hands them to its loop with
        `loop.call_soon_threadsafe`."""
        listener = Listener(self.dsn, on_append, session_ids=session_ids,
                            on_outbox=on_outbox, on_lost=on_lost, on_preview=on_preview)
        listener.start()
        return listener

    def close(self) -> None:
        # Calls not started are dropped; one under way keeps its connection until it
        # ends, and the pool closes it then.
        self.blocking_executor.shutdown(wait=False, cancel_futures=True)
        self._pool.close()

# Helpers ------------------------------------------------------------------------------
def _bump(cur: psycopg.Cursor[Any], session_id: str, n: int) -> int:
    """The session's last seq after adding `n`; holds the session's counter row until
    the transaction ends (what queues the session's other appenders)."""
    row = cur.execute("INSERT INTO counters VALUES (%s, %s) ON CONFLICT (session_id) DO "
                      "UPDATE SET last_seq = counters.last_seq + excluded.last_seq "
                      "RETURNING last_seq", (session_id, n)).fetchone()
    assert row is not None
    return int(row[0])


def _set_status(cur: psycopg.Cursor[Any], session_id: str, status: str) -> None:
    """The session document's `status`, rewritten in Python so its keys keep their order
    (jsonb would sort them)."""
    row = cur.execute("SELECT doc FROM resources WHERE kind = 'session' AND id = %s "
                      "FOR UPDATE", (session_id,)).fetchone()
    if row is None:
        return
    doc = loads(row[0])
    doc["status"] = status
    cur.execute("UPDATE resources SET status = %s, doc = %s WHERE kind = 'session' AND id = %s",
                (status, dumps(doc), session_id))


def _save_conversation(cur: psycopg.Cursor[Any], session_id: str, start: int,
                       messages: list[str]) -> None:
    cur.execute("DELETE FROM conversation WHERE session_id = %s AND n >= %s",
                (session_id, start))
    if messages:
        _insert_rows(cur, "INSERT INTO conversation",
                     [(session_id, start + i, m) for i, m in enumerate(messages)])


def _delivery_rows(deliveries: list[Delivery], now: float) -> list[tuple[Any, ...]]:
    return [(f"dlv_{uuid.uuid4().hex}", owner, endpoint_id, dumps(payload), now, now)
            for owner, endpoint_id, payload in deliveries]


def _insert_deliveries(cur: psycopg.Cursor[Any], rows: list[tuple[Any, ...]]) -> None:
    _insert_rows(cur, f"INSERT INTO outbox {OUTBOX_COLUMNS}", rows)
    cur.execute("SELECT pg_notify(%s, '')", (OUTBOX_CHANNEL,))


def _latest_rows(session_id: str, entries: list[JSON]) -> list[tuple[Any, ...]]:
    """One `latest` row per event id (one upsert statement may not touch a row twice):
    its first seq among `entries`, the rest from its last appearance."""
    rows: dict[str, tuple[Any, ...]] = {}
    for entry in entries:
        first = rows[entry["id"]][1] if entry["id"] in rows else entry["seq"]
        rows[entry["id"]] = (session_id, first, entry["id"], entry["seq"], entry["type"],
                             stored_time(entry.get("processed_at")), is_queued(entry))
    return list(rows.values())


_ROWS_PER_INSERT = 1000


def _insert_rows(cur: psycopg.Cursor[Any], head: str, rows: list[tuple[Any, ...]],
                 tail: str = "") -> None:
    """All `rows` in one `INSERT … VALUES (…), (…)` statement. Not `executemany`: psycopg
    pipelines it, and a process paused between a pipeline's messages leaves its
    transaction open without the idle timeout (the server never reached the point of
    waiting for a new command), holding its locks until it wakes."""
    for start in range(0, len(rows), _ROWS_PER_INSERT):  # under 65535 parameters
        chunk = rows[start:start + _ROWS_PER_INSERT]
        one = "(" + ", ".join(["%s"] * len(chunk[0])) + ")"
        cur.execute(f"{head} VALUES {', '.join([one] * len(chunk))} {tail}",
                    [value for row in chunk for value in row])
