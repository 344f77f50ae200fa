"""`OrderedWriter`: one session's store writes, in the order they were made, off the
event loop.

The engine reports a turn through synchronous callbacks (`SessionProjection`), and each
report is a store write (`SessionLog.write`). Made on the event loop, a write to
PostgreSQL blocks the whole process for its round trip and any lock wait: with
`wisp serve --role all`, every API request and stream of the process waits with it.

The design: synchronous callers enqueue (`later`), and one task per session drains the
queue, awaiting each write on the store's thread pool (`wisp.serve.store.offload`) before
starting the next. So:

- a session's writes reach the store one at a time, in the order they were made, and a
  crash leaves a prefix of them: the log stays prefix-consistent;
- the callers that need their writes done await `flush` (the driver does before a tool
  runs, at the end of a turn, before reporting a settled step, before letting the lease
  go), or `call` for a store job of their own that must come after the queued writes
  (the budget's document updates);
- a fenced write (`LeaseLost`) fences the writer: it and the writes queued behind it
  are not written, and every later `later`, `call` or `flush` raises `LeaseLost`, which
  stops the turn as a fenced write always did. Another failure (the database is away)
  stops the writer likewise, for good: writing what came after a lost write would leave
  a gap in the log (a tool's result without its call), and the turn ends on the next
  write or flush. The session's log stays a prefix of what the turn did, which is what
  recovery continues from once the driver is dropped. Such a failure is first checked
  against the lease (`fence_probe`): a worker that was frozen past its lease finds its
  connection gone when it wakes, and must still learn that it was fenced off (its next
  write did, when writes were made one by one on the loop).

On a store without a thread pool (SQLite: calls of microseconds) a write runs inline,
exactly as a direct call: `later` returns its result, `flush` has nothing to wait for.

A client event's acknowledgement is not written here: the API logs it (`sync`) before it
answers (`wisp.serve.session_writes`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from wisp.serve.store.base import LeaseLost
from wisp.serve.store.offload import executor_of, off_loop

T = TypeVar("T")
# A job, what to do on the loop with its result once it is written, and who awaits it.
_Queued = tuple[Callable[[], Any], Callable[[Any], None] | None, "asyncio.Future[Any] | None"]


class OrderedWriter:
    def __init__(self, store: object, *, deferred: bool = True,
                 fence_probe: Callable[[], LeaseLost | None] | None = None) -> None:
        self.store = store
        self.fence_probe = fence_probe  # store calls: whether the writes are fenced off
        self.inline = not deferred or executor_of(store) is None
        self.lost: LeaseLost | None = None  # a fenced write: nothing more is written
        self._failed: Exception | None = None  # a failed write: nothing more is written
        self._queue: deque[_Queued] = deque()
        self._drainer: asyncio.Task[None] | None = None

    def later(self, job: Callable[[], T], then: Callable[[T], None]) -> T | None:
        """`job` (store calls, no event-loop object) after the writes queued before it;
        `then(result)` on the loop once it is done. Inline: done now, its result."""
        self._check()
        if self.inline:
            result = self._inline(job)
            then(result)
            return result
        self._queue.append((job, then, None))
        self._drain()
        return None

    async def call(self, job: Callable[[], T]) -> T:
        """`job` after the writes queued before it, awaited: its result."""
        self._check()
        if self.inline:
            return self._inline(job)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((job, None, future))
        self._drain()
        return await future

    async def flush(self) -> None:
        """Waits until every write queued so far is in the store; raises what stopped
        them (`LeaseLost`, or the store's error)."""
        if self._queue or self._failed is not None or self.lost is not None:
            await self.call(lambda: None)

    def _check(self) -> None:
        if self.lost is not None:
            raise LeaseLost(self.lost.session_id, self.lost.holder)
        if self._failed is not None:
            raise self._failed

    def _inline(self, job: Callable[[], T]) -> T:
        try:
            return job()
        except LeaseLost as lost:
            self.lost = lost
            raise

    def _drain(self) -> None:
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while self._queue:
            job, then, future = self._queue[0]
            try:
                result = await off_loop(self.store, job)
            except Exception as exc:
                self._stop(await self._fenced_instead(exc))
                return
            self._queue.popleft()
            if then is not None:
                then(result)
            if future is not None and not future.done():
                future.set_result(result)

    async def _fenced_instead(self, exc: Exception) -> Exception:
        """`LeaseLost` for a failed write when the lease is another's now, else `exc`."""
        if isinstance(exc, LeaseLost) or self.fence_probe is None:
            return exc
        try:
            lost = await off_loop(self.store, self.fence_probe)
        except Exception:  # the database is away: the write's own error says it
            return exc
        return exc if lost is None else lost

    def _stop(self, exc: Exception) -> None:
        """A write failed: neither it nor any queued behind it is written; those
        awaited fail with its error, and so does every later one (`_check`)."""
        if isinstance(exc, LeaseLost):
            self.lost = exc
        else:
            self._failed = exc
        while self._queue:
            _, _, future = self._queue.popleft()
            if future is not None and not future.done():
                future.set_exception(exc)
