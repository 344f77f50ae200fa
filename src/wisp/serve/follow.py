"""Following a log on an SSE stream: a session's (`GET …/events/stream`) or a session
thread's (`GET …/threads/{id}/stream`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import SseWriter
from wisp.serve.session_log import public
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

POLL_S = 0.5  # a stream re-reads the log this often even unwoken (writes by other processes)


async def follow(store: Store, session_id: str, after: int, wake: asyncio.Event,  # noqa: PLR0917
                 previews: asyncio.Queue[JSON], out: SseWriter, *,
                 gone: Callable[[], Awaitable[bool]]) -> None:
    """Sends every log entry after `after`, in order, then waits for more: woken by the
    fanout (this process) or every POLL_S (another process's writes). `gone()` says the
    log's session was deleted: the stream then ends with `session.deleted`. The log is
    read off the event loop (`off_loop`): every stream polls, and one slow read must not
    stall the others."""
    while True:
        while not previews.empty():
            preview = previews.get_nowait()
            await out.send_json(preview, event=str(preview["type"]))
        entries = await off_loop(store, store.log, session_id, after)
        for entry in entries:
            after = int(entry["seq"])
            await out.send_json(public(entry), event=str(entry["type"]), id=str(after))
            if entry["type"] in ("session.deleted", "session.status_terminated"):
                return
        if not entries and await gone():
            # Deleted, log and all, before this stream read its last event.
            await out.send_json(shapes.session_deleted_event(), event="session.deleted")
            return
        wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), POLL_S)


def session_gone(store: Store, session_id: str) -> Callable[[], Awaitable[bool]]:
    """`follow`'s `gone` for a session's log (or a thread of it): asks the store."""
    async def gone() -> bool:
        return await off_loop(store, store.owner_of, "session", session_id) is None
    return gone


def preview_filter(kinds: list[str], queue: asyncio.Queue[JSON], wake: asyncio.Event
                   ) -> Callable[[JSON], None]:
    """What a stream with `event_deltas` takes of the previews: those of the event
    types asked for, from each event's start on."""
    wanted = set(kinds)
    building: set[str] = set()

    def offer(event: JSON) -> None:
        if event.get("type") == "event_start":
            inner = event.get("event") or {}
            if inner.get("type") not in wanted:
                return
            building.add(str(inner.get("id")))
        elif str(event.get("event_id")) not in building:
            return
        queue.put_nowait(event)
        wake.set()
    return offer
