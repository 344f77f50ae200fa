"""One session's event log as the service writes it: events get their server fields
(`id`, `processed_at`), go to the store in one transaction (with the model conversation
when it changed), and wake whoever follows the session's stream.

The store is the source of truth: a follower woken here re-reads the log from the last
seq it saw, so a wake-up can never make it skip or repeat an event. Previews
(`event_start` / `event_delta`) are the exception: they are never stored, only offered to
the followers that asked for them, and the complete event follows them in the log.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from wisp.jsontypes import JSON
from wisp.serve import webhooks
from wisp.serve.log_writer import OrderedWriter
from wisp.serve.shapes import (
    ClientEventRecord,
    Preview,
    ServerEvent,
    log_entry,
    new_id,
    timestamp,
)
from wisp.serve.store.base import UNTAKEN, Delivery, LeaseLost, Store

T = TypeVar("T")
PROBE_LEASE_S = 30.0  # what workers hold a session's lease for (a probe renews it)


def event_id() -> str:
    return new_id("sevt")


def tool_event_id(tool_use_id: str) -> str:
    """The event id of the `agent.tool_use` / `agent.custom_tool_use` for a model tool
    call. Derived, not random, so that after a crash the answer a client sent (naming the
    event id) still finds its call in the model conversation."""
    return f"sevt_{tool_use_id}"


class Fanout:
    """Wakes a session's followers (SSE streams, the worker) in this process. Followers of
    another process notice writes by polling (`wisp.serve.stream`)."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._previews: dict[str, set[Callable[[JSON], None]]] = {}

    def watch(self, session_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters.setdefault(session_id, set()).add(event)
        return event

    def unwatch(self, session_id: str, event: asyncio.Event) -> None:
        waiters = self._waiters.get(session_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._waiters[session_id]

    def wake(self, session_id: str) -> None:
        for event in self._waiters.get(session_id, ()):
            event.set()

    def wake_all(self) -> None:
        """Every follower looks again (notifications from other processes were lost)."""
        for waiters in self._waiters.values():
            for event in waiters:
                event.set()

    def on_preview(self, session_id: str, send: Callable[[JSON], None]) -> Callable[[], None]:
        self._previews.setdefault(session_id, set()).add(send)
        return lambda: self._previews.get(session_id, set()).discard(send)

    def preview(self, session_id: str, event: JSON) -> None:
        for send in list(self._previews.get(session_id, ())):
            send(event)

    def has_previews(self, session_id: str) -> bool:
        return bool(self._previews.get(session_id))


class SessionLog:
    """Appends one session's events. `deferred` (a driver's log): writes are queued and
    made off the event loop, in order (`wisp.serve.log_writer`), and `write` returns the
    entries as they will be stored, without `seq`; whoever needs them written awaits
    `flush`. Else (and on SQLite) each write is made when called and returns the entries
    as stored."""

    def __init__(self, store: Store, fanout: Fanout, session_id: str, *,
                 holder: str | None = None, deferred: bool = False) -> None:
        self.store = store
        self.fanout = fanout
        self.session_id = session_id
        self.holder = holder  # the worker whose lease fences these writes (None: the API)
        self.writer = OrderedWriter(store, deferred=deferred, fence_probe=self._fence_probe)
        self.silenced = False  # handed back: what the turn does from now on is not kept
        self._owner: str | None = None  # looked up once, when a webhook may need it

    @property
    def fenced(self) -> bool:
        """A write was refused: the lease is another worker's now."""
        return self.writer.lost is not None

    def emit(self, *events: ServerEvent, conversation: tuple[int, list[JSON]] | None = None,
             status: str | None = None) -> list[JSON]:
        """Server events (built by `wisp.serve.shapes`), stamped again with the time
        they are written."""
        stamp = timestamp()
        return self.write([{**log_entry(e), "processed_at": stamp} for e in events],
                          conversation, status)

    def write(self, entries: list[JSON], conversation: tuple[int, list[JSON]] | None = None,
              status: str | None = None) -> list[JSON]:
        if self.silenced:
            return []
        # The hub is found here, on the loop: the append may run on another thread.
        hub = webhooks.hub(self.store) if webhooks.reports_any(entries) else None
        stored = self.writer.later(functools.partial(self._append, entries, conversation,
                                                     status, hub), self._written)
        return entries if stored is None else stored[0]

    async def flush(self) -> None:
        """Every write made so far is in the store (`LeaseLost` if it was fenced)."""
        await self.writer.flush()

    def later(self, job: Callable[[], object]) -> None:
        """A store job of the caller's, queued after this log's writes (made now when
        writes are not deferred)."""
        self.writer.later(job, lambda _: None)

    async def call(self, job: Callable[[], T]) -> T:
        """A store job of the caller's (store calls only: it may run on another thread)
        after this log's queued writes."""
        return await self.writer.call(job)

    def _append(self, entries: list[JSON], conversation: tuple[int, list[JSON]] | None,
                status: str | None, hub: webhooks.Hub | None) -> tuple[list[JSON], bool]:
        """The store's side of a write (it may run on the store's thread pool): the
        entries as stored, and whether webhook deliveries were queued with them."""
        deliveries = None if hub is None else self._deliveries(hub, entries)
        stored = self.store.append(self.session_id, entries, conversation, status,
                                   sync=False, deliveries=deliveries, holder=self.holder)
        return stored, bool(deliveries)

    def _fence_probe(self) -> LeaseLost | None:
        """After a failed write (on the store's thread): `LeaseLost` when the lease these
        writes are fenced by is not the holder's any more. Asked as the fence asks (the
        holder's lease, expired or not, even one another took and let go): by renewing
        it, as its holder does anyway."""
        if self.holder is None or self.store.renew_lease(self.session_id, self.holder,
                                                          PROBE_LEASE_S):
            return None
        return LeaseLost(self.session_id, self.holder)

    def _written(self, done: tuple[list[JSON], bool]) -> None:
        """Wakes the session's followers (and the deliverer) once a write is stored."""
        self.fanout.wake(self.session_id)
        if done[1]:
            webhooks.hub(self.store).wake()

    def _deliveries(self, hub: webhooks.Hub, entries: list[JSON]) -> list[Delivery] | None:
        """Webhook deliveries reporting the status events among `entries`, written in the
        same transaction: a crash can neither lose one nor leave one for an event that
        was never written."""
        if self._owner is None:
            self._owner = self.store.owner_of("session", self.session_id) or ""
        if not self._owner:  # the session is gone
            return None
        return hub.deliveries(self._owner, self.session_id, entries)

    def consumed(self, events: Sequence[ClientEventRecord]) -> list[JSON]:
        """Client events taken up by the agent: logged again, same ids, with
        `processed_at` set (without the store's `seq`); one processed on receipt keeps
        its time."""
        stamp = timestamp()
        return self.write([{**public(log_entry(e)), "processed_at": e["processed_at"] or stamp}
                           for e in events])

    def preview(self, event: Preview) -> None:
        self.fanout.preview(self.session_id, cast(JSON, event))


def public(entry: JSON) -> JSON:
    """A log entry as clients see it (and as it is logged again): without the store's
    `seq` or the private `UNTAKEN`."""
    return {k: v for k, v in entry.items() if k not in ("seq", UNTAKEN)}

