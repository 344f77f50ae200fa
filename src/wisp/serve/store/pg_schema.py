"""`PostgresStore`'s schema and its migration: the same tables as SQLite's (resources,
log, latest, conversation, leases, outbox) plus `counters` (last seq per session), in a
schema of their own (`wisp` unless told otherwise) whose `wisp_schema.version` says which
layout it has. Several processes may start at once: one migrates, under an advisory lock,
while the others wait for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 1
# Which processes stream previews of which session, so the worker running its turn
# publishes them (`wisp.serve.durable.previews`). Created by every start: it came after
# schema version 1, and IF NOT EXISTS keeps that version.
PREVIEW_WATCH = """
CREATE TABLE IF NOT EXISTS preview_watch (
    session_id TEXT NOT NULL,
    watcher TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, watcher)
)"""
# Any constant: the advisory lock that keeps two processes from migrating at once.
MIGRATION_LOCK = 0x77697370  # "wisp"

SCHEMA = """
CREATE TABLE resources (
    n BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    created_at TEXT,
    archived BOOLEAN NOT NULL,
    status TEXT,
    doc TEXT NOT NULL,
    UNIQUE (kind, id)
);
CREATE INDEX resources_by_owner ON resources (kind, owner, n);
CREATE INDEX resources_running ON resources (id) WHERE kind = 'session' AND status = 'running';

CREATE TABLE counters (
    session_id TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);

CREATE TABLE log (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    processed_at TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE latest (
    session_id TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    event_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    type TEXT NOT NULL,
    processed_at TEXT COLLATE "C",
    queued BOOLEAN NOT NULL,
    PRIMARY KEY (session_id, first_seq)
);
CREATE UNIQUE INDEX latest_by_id ON latest (session_id, event_id);
CREATE INDEX latest_queued ON latest (session_id) WHERE queued;

CREATE TABLE conversation (
    session_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, n)
);

CREATE TABLE leases (
    session_id TEXT PRIMARY KEY,
    worker TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);

CREATE TABLE outbox (
    n BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at DOUBLE PRECISION NOT NULL,
    last_error TEXT,
    done BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX outbox_due ON outbox (next_at, n) WHERE NOT done
"""


def migrate(conn: psycopg.Connection[Any], schema: str) -> None:
    """Creates the tables in `schema` if they are not there yet (one transaction); refuses
    a schema a newer wisp wrote."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        cur.execute(f"SET LOCAL search_path TO {schema}")
        cur.execute("CREATE TABLE IF NOT EXISTS wisp_schema (version INTEGER NOT NULL)")
        row = cur.execute("SELECT version FROM wisp_schema").fetchone()
        version = 0 if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"store schema {version} is newer than this wisp "
                               f"({SCHEMA_VERSION})")
        if version == 0:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    cur.execute(statement)
            cur.execute("INSERT INTO wisp_schema VALUES (%s)", (SCHEMA_VERSION,))
        cur.execute(PREVIEW_WATCH)
