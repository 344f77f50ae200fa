"""An overall deadline for a blocking network exchange run in a worker thread.

Above: WebFetch, which makes one per call (and cancels it when the call is interrupted);
`_web_http.fetch`, which shows it each connection it opens. A socket timeout bounds one
read; this bounds them all, by shutting down the socket in use, which ends any read or
write blocked on it. Kept apart from `_web_http` so WebFetch can make one on the event
loop without loading the HTTP and TLS modules there.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Protocol

_SHUTDOWN_EVERY_S = 0.05  # past the deadline, how often a newly opened socket is shut


class _Connection(Protocol):
    @property
    def sock(self) -> socket.socket | None: ...


class Deadline:
    """Ends a fetch `seconds` from now, or on `cancel`: from then on, a watcher thread
    shuts down the socket of whichever connection the fetch has open (and of any it opens
    later), so no read or connect can outlast it. `expired` says it happened."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self.expired = False
        self._conn: _Connection | None = None
        self._fire = threading.Event()
        self._done = threading.Event()
        self._timer = threading.Thread(target=self._watch, name="webfetch-deadline",
                                       daemon=True)
        self._timer.start()

    def watch(self, conn: _Connection) -> None:
        self._conn = conn

    def cancel(self) -> None:
        self._fire.set()

    def close(self) -> None:
        self._done.set()
        self._fire.set()

    def _watch(self) -> None:
        self._fire.wait(self.seconds)
        if self._done.is_set():
            return
        self.expired = True
        while True:
            sock = self._conn.sock if self._conn is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            if self._done.wait(_SHUTDOWN_EVERY_S):
                return
