"""Waking followers in other processes: `Listener`, a thread with its own connection that
LISTENs on `PostgresStore`'s channels and calls back for each notification (and calls
`on_lost` once it listens again after its connection broke: notifications may have been
missed meanwhile)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.serve.store.pg_connections import connect
from wisp.serve.store.rows import loads

if TYPE_CHECKING:
    import psycopg

LOG_CHANNEL = "wisp_log"
OUTBOX_CHANNEL = "wisp_outbox"
PREVIEW_CHANNEL = "wisp_preview"


class Listener:
    """A thread with its own connection, LISTENing on the store's channels."""

    def __init__(self, dsn: str, on_append: Callable[[str, int, bool], None], *,
                 session_ids: set[str] | None = None,
                 on_outbox: Callable[[], None] | None = None,
                 on_lost: Callable[[], None] | None = None,
                 on_preview: Callable[[str, str, JSON], None] | None = None,
                 reconnect_s: float = 0.5) -> None:
        self.dsn = dsn
        self.on_append = on_append
        self.on_preview = on_preview
        self.session_ids = session_ids
        self.on_outbox = on_outbox
        self.on_lost = on_lost
        self.reconnect_s = reconnect_s
        self.ready = threading.Event()  # set once LISTEN is in force (again)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wisp-pg-listener",
                                        daemon=True)
        self._conn: psycopg.Connection[Any] | None = None

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                self._conn = conn = connect(self.dsn, 10.0)
                conn.execute(f"LISTEN {LOG_CHANNEL}")
                conn.execute(f"LISTEN {OUTBOX_CHANNEL}")
                if self.on_preview is not None:
                    conn.execute(f"LISTEN {PREVIEW_CHANNEL}")
                if not first and self.on_lost is not None:
                    # Listening again: whatever was sent while away is unknown, so
                    # followers re-read now (this covers the whole gap).
                    self.on_lost()
                first = False
                self.ready.set()
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        self._dispatch(note.channel, note.payload)
            except Exception:
                self.ready.clear()
                if self._stop.is_set():
                    return
                self._stop.wait(self.reconnect_s)
            finally:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

    def _dispatch(self, channel: str, payload: str) -> None:
        if channel == OUTBOX_CHANNEL:
            if self.on_outbox is not None:
                self.on_outbox()
            return
        if channel == PREVIEW_CHANNEL:
            session_id, _, rest = payload.partition(" ")
            sender, _, body = rest.partition(" ")
            if self.on_preview is not None:
                self.on_preview(session_id, sender, loads(body))
            return
        session_id, _, rest = payload.partition(" ")
        seq, _, queued = rest.partition(" ")
        wanted = self.session_ids
        if wanted is None or session_id in wanted:
            self.on_append(session_id, int(seq or 0), queued == "1")

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
