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
        self._order: dict[str, asyncio.Lock] = {}  # per session: its batches in order
        self._tasks: set[asyncio.Task[None]] = set()

    def notify(self, session_id: str) -> None:
        self._spawn(self._dispatch(session_id))

    def forget(self, session_id: str) -> None:
        self._spawn(self._cancel(session_id))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # held: the loop keeps only weak references
        task.add_done_callback(self._tasks.discard)

    def _lock(self, session_id: str) -> asyncio.Lock:
        lock = self._order.get(session_id)
        if lock is None:
            lock = self._order[session_id] = asyncio.Lock()
        return lock

    def _unlock_done(self, session_id: str) -> None:
        lock = self._order.get(session_id)
        if lock is not None and not lock.locked():
            del self._order[session_id]

    async def _dispatch(self, session_id: str) -> None:
        async with self._lock(session_id):
            try:
                await dispatch_queued(self.store, self.client, session_id,
                                      consume_strays=True)
            except Exception as exc:  # logged already: the reconciler passes it on
                print(f"wisp serve: dispatch for {session_id}: {exc!r}", file=sys.stderr)
        self._unlock_done(session_id)

    async def _cancel(self, session_id: str) -> None:
        async with self._lock(session_id):
            try:
                await self.client.cancel(session_id)
            except Exception as exc:
                print(f"wisp serve: cancelling {session_id}'s turns: {exc!r}",
                      file=sys.stderr)
        self._unlock_done(session_id)

    async def close(self) -> None:
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
