"""`TurnDispatch`: an API process's side of durable turns. Once client events are logged
(and acknowledged), a `user.message` starts its turn and anything else is told to the
turn under way (`wisp.serve.durable.turns.dispatch_queued`).

Dispatch runs after the response, one session event batch at a time and in order, so a
client's answer never overtakes the message that started its turn. It may fail (the
database is away, the process dies): the events are in the log regardless, and the
workers' reconciler passes them on.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

from wisp.serve.durable.turns import TurnClient, dispatch_queued
from wisp.serve.store.postgres import PostgresStore


class TurnDispatch:
    def __init__(self, store: PostgresStore, client: TurnClient) -> None:
        self.store = store
        self.client = client
        # Per session: its batches in order (the lock, and how many dispatches use it).
        self._order: dict[str, tuple[asyncio.Lock, int]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def notify(self, session_id: str) -> None:
        self._spawn(self._dispatch(session_id))

    def forget(self, session_id: str) -> None:
        self._spawn(self._cancel(session_id))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # held: the loop keeps only weak references
        task.add_done_callback(self._tasks.discard)

    async def _dispatch(self, session_id: str) -> None:
        await self._in_order(session_id, dispatch_queued(
            self.store, self.client, session_id, consume_strays=True), "dispatch for")

    async def _cancel(self, session_id: str) -> None:
        await self._in_order(session_id, self.client.cancel(session_id), "cancelling")

    async def _in_order(self, session_id: str, work: Coroutine[Any, Any, None],
                        what: str) -> None:
        """Runs `work` after the session's earlier dispatches; the lock lives while any
        dispatch of the session holds or awaits it (dropped with a waiter left, a new
        lock would let two run at once)."""
        lock, users = self._order.get(session_id, (asyncio.Lock(), 0))
        self._order[session_id] = (lock, users + 1)
        try:
            async with lock:
                await work
        except Exception as exc:  # logged already: the reconciler passes it on
            print(f"wisp serve: {what} {session_id}: {exc!r}", file=sys.stderr)
        finally:
            lock, users = self._order[session_id]
            if users == 1:
                del self._order[session_id]
            else:
                self._order[session_id] = (lock, users - 1)

    async def close(self) -> None:
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
