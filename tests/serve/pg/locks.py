"""Locks held from a second PostgreSQL connection, and what `wisp serve` does meanwhile:
the means of the tests that hold a store call of the service waiting (`pg_stat_activity`
shows it waiting on `Lock`) and check that the process still answers requests, which it
cannot while the call is made on its event loop.

A row lock (`SELECT … FOR UPDATE`, or an uncommitted insert) holds back writers of the
row. A plain `SELECT` waits on nothing but a table lock in `ACCESS EXCLUSIVE` mode
(`holding_table`), which holds back every statement on the table, the API's too: while
`resources` is so locked, the process is probed with a request answered without the
store (`answered_without_store`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import psycopg

from tests.serve.harness import KEYS, Served
from tests.waits import wait_until

# Far above what answering a request takes, even on a loaded machine; on a blocked event
# loop the answer never comes while the lock is held.
ANSWER_WITHIN_S = 20.0
HEADERS = {"x-api-key": KEYS[0], "anthropic-version": "2023-06-01"}


def waiting(admin: psycopg.Connection[Any], statement: str, *, whole: bool = False) -> bool:
    """Whether a statement of the service containing `statement` (`whole`: that is
    `statement`) waits for a lock now."""
    pattern = statement if whole else f"%{statement}%"
    row = admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wisp serve' "
        "AND wait_event_type = 'Lock' AND query ILIKE %s", (pattern,)).fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def holding(dsn: str, sql: str, params: tuple[Any, ...] = ()
            ) -> Iterator[tuple[psycopg.Connection[Any], Callable[[], None]]]:
    """`sql` run in a transaction left open (its locks held) until `release()` or the
    block's end; yields a second connection to watch the server with, and `release`."""
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        holder.execute(sql, params)
        try:
            yield admin, holder.rollback
        finally:
            holder.rollback()


def holding_thread(dsn: str, session_id: str, thread_id: str
                   ) -> contextlib.AbstractContextManager[
                       tuple[psycopg.Connection[Any], Callable[[], None]]]:
    """`holding` the row of the session's thread (`FOR UPDATE`): its status writes wait."""
    return holding(dsn, "SELECT id FROM wisp.resources WHERE kind = %s AND id = %s "
                        "FOR UPDATE", (f"thread:{session_id}", thread_id))


@contextlib.contextmanager
def holding_table(dsn: str, table: str) -> Iterator[Callable[[], None]]:
    """`wisp.<table>` locked against every statement (readers too) until `release()` or
    the block's end. Taking the lock waits for the transactions on the table to end."""
    with psycopg.connect(dsn) as holder:
        holder.execute(f"LOCK TABLE wisp.{table} IN ACCESS EXCLUSIVE MODE")
        try:
            yield holder.rollback
        finally:
            holder.rollback()


@contextlib.contextmanager
def asking_for_table(dsn: str, table: str) -> Iterator[Callable[[], None]]:
    """`holding_table`, the lock asked for on another thread: taking it may wait for a
    statement that itself waits on a lock the test holds (the service's reconciler reads
    `latest` and `resources` in one). Meanwhile it is queued, which holds back the
    statements on the table that come after it just as well. Yields once the lock is
    taken or queued; `release()` waits until it was taken, then lets it go."""
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as admin:
        pid = holder.info.backend_pid
        taking = threading.Thread(target=holder.execute, daemon=True,
                                  args=(f"LOCK TABLE wisp.{table} IN ACCESS EXCLUSIVE MODE",))
        taking.start()
        wait_until(lambda: not taking.is_alive() or _queued(admin, pid),
                   f"the lock of {table} to be taken or queued")

        def release() -> None:
            taking.join(ANSWER_WITHIN_S)
            if taking.is_alive():  # never taken (the test failed): asked no more
                holder.cancel()
                taking.join()
            holder.rollback()

        try:
            yield release
        finally:
            release()


def _queued(admin: psycopg.Connection[Any], pid: int) -> bool:
    row = admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                        (pid,)).fetchone()
    return bool(row and row[0] == "Lock")


def answers_while_waiting(served: Served, admin: psycopg.Connection[Any], statement: str,
                          agent_id: str) -> None:
    """Once the service's `statement` waits, `GET /v1/agents` is answered (with
    `agent_id` listed) while it still waits."""
    wait_until(lambda: waiting(admin, statement), f"the service's {statement!r} to wait")
    with httpx2.Client(base_url=served.url, timeout=ANSWER_WITHIN_S, headers=HEADERS) as http:
        answer = http.get("/v1/agents")
    assert answer.status_code == 200
    assert agent_id in [a["id"] for a in answer.json()["data"]]
    assert waiting(admin, statement)  # answered while the call still waits


def answered_without_store(served: Served, admin: psycopg.Connection[Any],
                           statement: str) -> None:
    """Once the service's `statement` (the whole of it) waits, a request without an API
    key is answered (401: keys are checked in memory, no store call) while it still
    waits: the probe for when `resources`, which every route reads, is locked."""
    wait_until(lambda: waiting(admin, statement, whole=True),
               f"the service's {statement!r} to wait")
    with httpx2.Client(base_url=served.url, timeout=ANSWER_WITHIN_S) as http:
        answer = http.get("/v1/agents")
    assert answer.status_code == 401
    assert waiting(admin, statement, whole=True)  # answered while the call still waits
