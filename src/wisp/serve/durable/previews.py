"""`SharedFanout`: live previews (`event_start`/`event_delta`) across the processes of a
PostgreSQL deployment. The turn runs in a worker, while the stream that asked for
previews is held by an API process.

Previews are never stored, so they travel by NOTIFY (`wisp_preview`), and only when
wanted. A process holding a stream with `event_deltas` for a session records that in
`preview_watch`, kept fresh while the stream lives and removed when it closes. The
process running the turn publishes the session's previews only while some other process
watches it. Its local streams (`--role all`) are served in process, as in the embedded
service. A process ignores its own notifications.

None of this blocks the event loop: the store calls (NOTIFYs, the looks at
`preview_watch` and its rows) are queued, and one task makes them in order on the
store's thread pool (`wisp.serve.store.offload`), so a session's previews are published
in the order they were made. The engine's callback only asks the last look, which is
trusted for `WATCHED_CACHE_S`: while it says nobody else watches, previews are dropped
at once; when it is stale, they are queued and the queue looks again before publishing.

Previews are best effort, as the seed says: one too large for a notification is
dropped, so is one whose NOTIFY fails (said on stderr), and so is one made while
`MAX_QUEUED_PREVIEWS` wait in the queue already (the database is stalled: the queue must
not grow without bound; the watch/unwatch calls are always queued). The complete event
follows in any case.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
import time
from collections import deque
from collections.abc import Callable

from wisp.jsontypes import JSON
from wisp.serve.session_log import Fanout
from wisp.serve.store.offload import off_loop
from wisp.serve.store.postgres import PostgresStore

WATCH_TTL_S = 30.0
WATCHED_CACHE_S = 0.5  # how long a worker trusts its last look at `preview_watch`
MAX_QUEUED_PREVIEWS = 1000  # previews waiting to be published; more are dropped


class SharedFanout(Fanout):
    def __init__(self, store: PostgresStore, name: str) -> None:
        super().__init__()
        self.store = store
        self.name = name
        self._looked: dict[str, tuple[float, bool]] = {}  # session → (when, watched)
        self._refresher: asyncio.Task[None] | None = None
        # Store calls, and previews to publish (session, event), in order.
        self._outbox: deque[Callable[[], object] | tuple[str, JSON]] = deque()
        self._sender: asyncio.Task[None] | None = None
        self.queued_previews = 0  # the previews in `_outbox`
        self.dropped_previews = 0  # previews dropped because the queue was full

    def start(self) -> None:
        self._refresher = asyncio.ensure_future(self._refresh())

    async def close(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        for session_id in list(self._previews):
            self._later(functools.partial(self.store.unwatch_previews, session_id, self.name))
        if self._sender is not None:
            await self._sender  # what is queued is sent (it never raises: `_send`)

    # The queue of store calls -----------------------------------------------------------

    def queued(self) -> int:
        """The store calls and previews waiting to be sent."""
        return len(self._outbox)

    def _later(self, call: Callable[[], object] | tuple[str, JSON]) -> None:
        self._outbox.append(call)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        while self._outbox:
            call = self._outbox.popleft()
            if isinstance(call, tuple):  # a preview: dropped here if nobody else watches
                self.queued_previews -= 1
                if self._known(call[0]) is False:
                    continue
                call = functools.partial(self._publish, *call)
            try:
                await off_loop(self.store, call)
            except Exception as exc:  # the database is away: this one is lost
                print(f"wisp serve: previews: {exc!r}", file=sys.stderr)

    # A stream's side (API processes) ---------------------------------------------------

    def on_preview(self, session_id: str, send: Callable[[JSON], None]) -> Callable[[], None]:
        stop_local = super().on_preview(session_id, send)
        self._later(functools.partial(self.store.watch_previews, session_id, self.name,
                                      WATCH_TTL_S))

        def stop() -> None:
            stop_local()
            if not super(SharedFanout, self).has_previews(session_id):
                self._previews.pop(session_id, None)
                self._later(functools.partial(self.store.unwatch_previews, session_id,
                                              self.name))
        return stop

    def heard(self, session_id: str, sender: str, event: JSON) -> None:
        """A preview published by the process running the session's turn."""
        if sender != self.name:
            super().preview(session_id, event)

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(WATCH_TTL_S / 3)
            for session_id in [s for s in list(self._previews) if self._previews.get(s)]:
                self._later(functools.partial(self.store.watch_previews, session_id,
                                              self.name, WATCH_TTL_S))

    # The turn's side (worker processes) --------------------------------------------------

    def has_previews(self, session_id: str) -> bool:
        """Local streams want them, or another process may (the last look, unless it
        is stale: then the queue looks again before publishing)."""
        return super().has_previews(session_id) or self._known(session_id) is not False

    def preview(self, session_id: str, event: JSON) -> None:
        super().preview(session_id, event)
        if self._known(session_id) is False:
            return
        if self.queued_previews >= MAX_QUEUED_PREVIEWS:
            self.dropped_previews += 1  # the database is stalled: best effort, dropped
            return
        self.queued_previews += 1
        self._later((session_id, event))

    def _publish(self, session_id: str, event: JSON) -> None:
        """On the store's thread, in the queue's order."""
        if self._watched_elsewhere(session_id):
            self.store.publish_preview(session_id, self.name, event)

    def _known(self, session_id: str) -> bool | None:
        """The last look at whether another process watches the session; None: stale."""
        looked = self._looked.get(session_id)
        if looked is None or time.monotonic() - looked[0] >= WATCHED_CACHE_S:
            return None
        return looked[1]

    def _watched_elsewhere(self, session_id: str) -> bool:
        known = self._known(session_id)
        if known is not None:
            return known
        now = time.monotonic()
        watched = self.store.previews_watched(session_id, besides=self.name)
        self._looked[session_id] = (now, watched)
        if len(self._looked) > 10_000:  # sessions come and go: forget the stale looks
            self._looked = {s: v for s, v in self._looked.items()
                            if now - v[0] < WATCHED_CACHE_S}
        return watched
