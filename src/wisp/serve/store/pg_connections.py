"""`PostgresStore`'s connections: a small pool, so that the store can be used from several
threads at once (`wisp.serve.store.offload` runs its calls on a thread pool, off the
event loop) while each psycopg connection is used by one thread at a time.

A connection is borrowed for one store call (one statement, or one transaction) and given
back. Connections are opened when needed, up to `size` at once; a borrower past that
waits for one to come back. One that broke (the server went away, was restarted, killed
the backend) is dropped when it comes back, so the call that saw it break raises and the
next one opens a new connection. Idle connections are kept for the next calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

IDLE_IN_TRANSACTION_S = 5.0  # see `connect`


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the PostgreSQL store needs psycopg 3: "
                           "pip install 'psycopg[binary]'") from exc
    return psycopg


def connect(dsn: str, timeout: float) -> psycopg.Connection[Any]:
    driver = _psycopg()
    # A process paused inside a transaction (SIGSTOP, a long GC pause, a VM migration)
    # would hold its row locks (a lease, a session's seq counter) until it wakes, stalling
    # every process that touches them: the server ends such a transaction instead. Ours
    # last milliseconds.
    conn: psycopg.Connection[Any] = driver.connect(
        dsn, autocommit=True, connect_timeout=max(1, int(timeout)),
        application_name="wisp serve",
        options=f"-c idle_in_transaction_session_timeout={int(IDLE_IN_TRANSACTION_S * 1000)}")
    return conn


class Connections:
    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], size: int) -> None:
        if size < 1:
            raise ValueError("a connection pool needs room for one connection")
        self._connect = connect
        self._size = size
        self._idle: list[psycopg.Connection[Any]] = []
        self._out = 0  # borrowed now (or being opened)
        self._closed = False
        self._changed = threading.Condition()

    def add(self, conn: psycopg.Connection[Any]) -> None:
        """An open connection to lend (the one the schema was migrated on)."""
        with self._changed:
            self._idle.append(conn)
            self._changed.notify()

    @contextmanager
    def borrowed(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self._take()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _take(self) -> psycopg.Connection[Any]:
        with self._changed:
            while not self._closed and not self._idle and self._out >= self._size:
                self._changed.wait()
            if self._closed:
                raise RuntimeError("the PostgreSQL store is closed")
            self._out += 1
            conn = self._idle.pop() if self._idle else None
        if conn is not None and not (conn.closed or conn.broken):
            return conn
        if conn is not None:
            conn.close()
        try:
            # Outside the lock: connecting is a round trip others need not wait for.
            return self._connect()
        except BaseException:
            self._returned()
            raise

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        with self._changed:
            keep = not (self._closed or conn.closed or conn.broken)
            if keep:
                self._idle.append(conn)
            self._out -= 1
            self._changed.notify()
        if not keep:
            conn.close()

    def _returned(self) -> None:
        with self._changed:
            self._out -= 1
            self._changed.notify()

    def close(self) -> None:
        """Closes the idle connections now and the borrowed ones as they come back."""
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._changed.notify_all()
        for conn in idle:
            conn.close()
