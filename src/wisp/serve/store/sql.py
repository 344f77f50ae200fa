"""The SQL both stores share (`sqlite.SqliteStore`, `postgres.PostgresStore`): every query
and write whose text is the same on both databases but for a few spellings, which a
`Dialect` supplies. Statements are written with `?` placeholders; `Dialect.sql` turns them
into the driver's style.

What is really different stays in each store: connections and transactions, the schema
and its migration, how an append takes the next `seq` (SQLite's file lock, PostgreSQL's
counter row) and the claim of deliveries (PostgreSQL's `SKIP LOCKED`), SQLite's WAL and
fsync settings, PostgreSQL's LISTEN/NOTIFY.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve.store.base import Change, Condition, Doc, Page
from wisp.serve.store.rows import checked, cursor, descending, loads, position, time_key

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class Dialect:
    """How one database spells what the shared SQL needs."""

    placeholder: str  # "?" (sqlite3) or "%s" (psycopg)
    true: str  # a boolean literal: SQLite has none (1/0), PostgreSQL TRUE/FALSE
    false: str
    # Lease expiry's clock as SQL, seconds since the epoch: every process of a deployment
    # compares against the same one (the host's for SQLite, the server's for PostgreSQL).
    now: str
    # A session's rows to delete with it (PostgreSQL also keeps its seq counter).
    session_tables: tuple[str, ...]
    # What orders outbox rows written in one instant: their write order.
    outbox_order: str
    # Row locks taken for a write decision (SQLite's write lock covers the whole file).
    for_share: str = ""
    for_update: str = ""

    def sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    def is_true(self, column: str) -> str:
        """A test of a boolean column that a partial index `WHERE column` still serves."""
        return f"{column} = 1" if self.true == "1" else column

    def is_false(self, column: str) -> str:
        return f"{column} = 0" if self.false == "0" else f"NOT {column}"


def entry(body: str, seq: int) -> JSON:
    """A log entry as stored: the event with its `seq` (the column is the truth)."""
    return {**loads(body), "seq": int(seq)}


def delivery(row: Any) -> JSON:
    return {"id": row[0], "owner": row[1], "endpoint_id": row[2], "payload": loads(row[3]),
            "attempts": row[4], "next_at": row[5], "last_error": row[6]}


def derived(doc: Mapping[str, Any]) -> tuple[bool, Any]:
    """The columns a resource's queries filter on: archived flag and status."""
    return doc.get("archived_at") is not None, doc.get("status")


LATEST_BODY = "FROM latest e JOIN log l ON l.session_id = e.session_id AND l.seq = e.seq"
LOG_COLUMNS = "(session_id, seq, event_id, type, processed_at, body)"
LATEST_COLUMNS = "(session_id, first_seq, event_id, seq, type, processed_at, queued)"
# A later form of an event replaces the earlier one in `latest` but keeps its position.
UPSERT_LATEST_TAIL = """
ON CONFLICT (session_id, event_id) DO UPDATE SET
    seq = excluded.seq, type = excluded.type, processed_at = excluded.processed_at,
    queued = excluded.queued
"""
OUTBOX_COLUMNS = "(id, owner, endpoint_id, payload, next_at, created_at)"


class SqlStore:
    """`base.Store`'s methods whose SQL both databases share. A subclass supplies the
    dialect and its transactions: `_read()` yields something to `execute(sql, args)` on
    for one statement, `_write(sync)` the same inside one transaction; `execute` returns
    a cursor (`fetchone`, `fetchall`, `rowcount`)."""

    dialect: Dialect

    def _read(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _write(self, sync: bool = True) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _one(self, text: str, args: tuple[Any, ...] = ()) -> Any:
        with self._read() as db:
            return db.execute(self.dialect.sql(text), args).fetchone()

    def _all(self, text: str, args: tuple[Any, ...] | builtins.list[Any] = ()
             ) -> builtins.list[Any]:
        with self._read() as db:
            rows: builtins.list[Any] = db.execute(self.dialect.sql(text), args).fetchall()
        return rows

    def _changed(self, text: str, args: tuple[Any, ...], sync: bool = True) -> int:
        """Rows one write statement changed."""
        with self._write(sync) as db:
            return int(db.execute(self.dialect.sql(text), args).rowcount)

    # Resources --------------------------------------------------------------------------
    def create(self, kind: str, owner: str, doc: Doc) -> Doc:
        self._changed("INSERT INTO resources (kind, id, owner, created_at, archived, status, "
                      "doc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (kind, doc["id"], owner, doc.get("created_at"), *derived(doc),
                       dumps(doc)))
        return doc

    def get(self, kind: str, owner: str, resource_id: str) -> JSON | None:
        row = self._one("SELECT doc FROM resources WHERE kind = ? AND owner = ? AND id = ?",
                        (kind, owner, resource_id))
        return None if row is None else loads(row[0])

    def list(self, kind: str, owner: str, *, limit: int, page: str | None,
             order: str = "desc", include_archived: bool = False) -> Page:
        desc = descending(order)
        where = ["kind = ?", "owner = ?"]
        args: builtins.list[Any] = [kind, owner]
        if not include_archived:
            where.append(self.dialect.is_false("archived"))
        if page is not None:
            where.append("n < ?" if desc else "n > ?")
            args.append(position("r", page))
        rows = self._all(f"SELECT n, doc FROM resources WHERE {' AND '.join(where)} "
                         f"ORDER BY n {'DESC' if desc else 'ASC'} LIMIT ?",
                         [*args, checked(limit) + 1])
        items = [loads(doc) for _, doc in rows[:limit]]
        return Page(items, cursor("r", rows[limit - 1][0]) if len(rows) > limit else None)

    def update(self, kind: str, owner: str, resource_id: str, doc: Doc) -> Doc | None:
        changed = self._changed("UPDATE resources SET archived = ?, status = ?, doc = ? "
                                "WHERE kind = ? AND owner = ? AND id = ?",
                                (*derived(doc), dumps(doc), kind, owner, resource_id))
        return doc if changed else None

    def modify(self, kind: str, owner: str, resource_id: str, change: Change
               ) -> JSON | None:
        d = self.dialect
        with self._write() as db:
            row = db.execute(d.sql("SELECT doc FROM resources WHERE kind = ? AND owner = ? "
                                   f"AND id = ? {d.for_update}"),
                             (kind, owner, resource_id)).fetchone()
            if row is None:
                return None
            new = change(loads(row[0]))
            if new is None:
                return loads(row[0])
            text = dumps(new)
            db.execute(d.sql("UPDATE resources SET archived = ?, status = ?, doc = ? "
                             "WHERE kind = ? AND owner = ? AND id = ?"),
                       (*derived(new), text, kind, owner, resource_id))
        return loads(text)

    def delete(self, kind: str, owner: str, resource_id: str, *,
               only_if: Condition | None = None) -> bool:
        d = self.dialect
        sql = d.sql
        with self._write() as db:
            if only_if is not None:
                row = db.execute(sql("SELECT doc FROM resources WHERE kind = ? AND owner = ? "
                                     f"AND id = ? {d.for_update}"),
                                 (kind, owner, resource_id)).fetchone()
                if row is None or not only_if(loads(row[0])):
                    return False
            deleted = db.execute(sql("DELETE FROM resources WHERE kind = ? AND owner = ? "
                                     "AND id = ?"), (kind, owner, resource_id)).rowcount > 0
            # A deleted session takes its log with it: otherwise its queued events would
            # keep it in `sessions_needing_work` forever.
            if deleted and kind == "session":
                for table in self.dialect.session_tables:
                    db.execute(sql(f"DELETE FROM {table} WHERE session_id = ?"),
                               (resource_id,))
        return bool(deleted)

    def owner_of(self, kind: str, resource_id: str) -> str | None:
        row = self._one("SELECT owner FROM resources WHERE kind = ? AND id = ?",
                        (kind, resource_id))
        return None if row is None else str(row[0])

    # Event log --------------------------------------------------------------------------
    def queued(self, session_id: str) -> builtins.list[JSON]:
        rows = self._all(f"SELECT l.body, l.seq {LATEST_BODY} WHERE e.session_id = ? AND "
                         f"{self.dialect.is_true('e.queued')} ORDER BY e.first_seq",
                         (session_id,))
        return [entry(body, seq) for body, seq in rows]

    def conversation(self, session_id: str) -> builtins.list[JSON]:
        rows = self._all("SELECT message FROM conversation WHERE session_id = ? ORDER BY n",
                         (session_id,))
        return [loads(row[0]) for row in rows]

    def log(self, session_id: str, after_seq: int = 0, limit: int = 1000) -> builtins.list[JSON]:
        rows = self._all("SELECT body, seq FROM log WHERE session_id = ? AND seq > ? "
                         "ORDER BY seq LIMIT ?", (session_id, after_seq, limit))
        return [entry(body, seq) for body, seq in rows]

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
        rows = self._all(f"SELECT e.first_seq, l.body, l.seq {LATEST_BODY} WHERE "
                         f"{' AND '.join(where)} ORDER BY e.first_seq "
                         f"{'DESC' if desc else 'ASC'} LIMIT ?", [*args, checked(limit) + 1])
        items = [entry(body, seq) for _, body, seq in rows[:limit]]
        return Page(items, cursor("e", rows[limit - 1][0]) if len(rows) > limit else None)

    def event(self, session_id: str, event_id: str) -> JSON | None:
        row = self._one(f"SELECT l.body, l.seq {LATEST_BODY} "
                        "WHERE e.session_id = ? AND e.event_id = ?", (session_id, event_id))
        return None if row is None else entry(row[0], row[1])

    # Work -------------------------------------------------------------------------------
    def acquire_lease(self, session_id: str, worker: str, ttl_s: float) -> bool:
        now = self.dialect.now
        return self._changed(
            f"INSERT INTO leases VALUES (?, ?, {now} + ?) ON CONFLICT (session_id) DO UPDATE "
            "SET worker = excluded.worker, expires_at = excluded.expires_at "
            f"WHERE leases.expires_at <= {now} OR leases.worker = excluded.worker",
            (session_id, worker, ttl_s)) > 0

    def renew_lease(self, session_id: str, worker: str, ttl_s: float) -> bool:
        # An expired lease nobody took is still ours: no other worker can have acted on it.
        return self._changed(f"UPDATE leases SET expires_at = {self.dialect.now} + ? "
                             "WHERE session_id = ? AND worker = ?",
                             (ttl_s, session_id, worker)) > 0

    def lease_holders(self) -> builtins.list[tuple[str, str]]:
        rows = self._all("SELECT session_id, worker FROM leases WHERE expires_at > "
                         f"{self.dialect.now}")
        return [(str(r[0]), str(r[1])) for r in rows]

    def lease_holder(self, session_id: str) -> str | None:
        row = self._one("SELECT worker FROM leases WHERE session_id = ? AND expires_at > "
                        f"{self.dialect.now}", (session_id,))
        return None if row is None else str(row[0])

    def release_lease(self, session_id: str, worker: str) -> None:
        self._changed("DELETE FROM leases WHERE session_id = ? AND worker = ?",
                      (session_id, worker))

    def sessions_needing_work(self, limit: int = 100) -> builtins.list[str]:
        d = self.dialect
        rows = self._all(f"""
            SELECT s.id FROM (
                SELECT DISTINCT session_id AS id FROM latest WHERE {d.is_true('queued')}
                UNION
                SELECT id FROM resources WHERE kind = 'session' AND status = 'running'
            ) s
            WHERE NOT EXISTS (SELECT 1 FROM leases WHERE session_id = s.id
                              AND expires_at > {d.now})
            LIMIT ?""", (limit,))
        return [str(session_id) for session_id, in rows]

    def _fence(self, db: Any, session_id: str, holder: str) -> bool:
        """Whether the lease is `holder`'s; locked (where rows lock) until the transaction
        ends, so no write lands after a takeover."""
        row = db.execute(self.dialect.sql("SELECT worker FROM leases WHERE session_id = ? "
                                          f"{self.dialect.for_share}"),
                         (session_id,)).fetchone()
        return row is not None and row[0] == holder

    # Webhook outbox ---------------------------------------------------------------------
    def _due(self) -> str:
        """Undone deliveries due by the first parameter, oldest due first, then in the
        order they were written (one event's deliveries, and deliveries released
        together, keep it); at most the second parameter of them."""
        d = self.dialect
        return d.sql("SELECT id, owner, endpoint_id, payload, attempts, next_at, last_error "
                     f"FROM outbox WHERE {d.is_false('done')} AND next_at <= ? "
                     f"ORDER BY next_at, {d.outbox_order} LIMIT ?")

    def due_deliveries(self, now: float, limit: int = 50) -> builtins.list[JSON]:
        with self._read() as db:
            rows = db.execute(self._due(), (now, limit)).fetchall()
        return [delivery(row) for row in rows]

    def _nothing_due(self, now: float) -> bool:
        """A plain read that spares a claim its write transaction when nothing is due
        (every poll of every process)."""
        with self._read() as db:
            return bool(db.execute(self._due(), (now, 1)).fetchone() is None)

    # Outbox bookkeeping skips the synchronous commit (`sync=False`): what a crash could
    # undo is a claim or an outcome, so a delivery is sent again, which at-least-once
    # allows.
    def release_deliveries(self, delivery_ids: builtins.list[str], at: float) -> None:
        if delivery_ids:
            self._changed(f"UPDATE outbox SET next_at = ? WHERE id IN "
                          f"({', '.join('?' * len(delivery_ids))}) AND "
                          f"{self.dialect.is_false('done')}", (at, *delivery_ids), sync=False)

    def delivery_done(self, delivery_id: str) -> None:
        self._changed(f"UPDATE outbox SET done = {self.dialect.true}, attempts = attempts + 1 "
                      "WHERE id = ?", (delivery_id,), sync=False)

    def delivery_failed(self, delivery_id: str, retry_at: float | None, error: str) -> None:
        # No retry time means giving up: the row is done, its last error kept for audit.
        # Only while not done: a late report from a deliverer whose claim had expired must
        # not bring back a delivery that another one has since completed.
        self._changed("UPDATE outbox SET attempts = attempts + 1, last_error = ?, "
                      "next_at = COALESCE(CAST(? AS DOUBLE PRECISION), next_at), done = ? "
                      f"WHERE id = ? AND {self.dialect.is_false('done')}",
                      (error, retry_at, retry_at is None, delivery_id), sync=False)
