"""Requests in flight, each matched to its answer by id: the one matcher behind both the
control channel (string ids wisp makes up) and MCP's JSON-RPC (the ids of its messages).

A request is registered with `expect` *before* it is written, so an answer can't arrive
first unseen. An answer is delivered with `settle` (a value) or `reject` (an exception).
An answer for an id nobody waits for is dropped, or, with `keep_unmatched`, kept (oldest
evicted past that many) for a request registered later under the same id. `close` fails
every waiting request, and every later `expect`, with one error: the peer has gone.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class PendingRequests(Generic[K, V]):
    def __init__(self, keep_unmatched: int = 0) -> None:
        self._waiting: dict[K, asyncio.Future[V]] = {}
        self._unmatched: OrderedDict[K, V | BaseException] = OrderedDict()
        self._keep = keep_unmatched
        self.failure: BaseException | None = None

    def expect(self, key: K) -> asyncio.Future[V]:
        """A future for the answer to `key`; raises `failure` once the peer has gone."""
        if self.failure is not None:
            raise self.failure
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        if key in self._unmatched:
            _resolve(future, self._unmatched.pop(key))
        return future

    def release(self, key: K) -> None:
        """Done with `key` (answered, timed out or cancelled): later answers are unmatched."""
        self._waiting.pop(key, None)

    def settle(self, key: K, value: V) -> bool:
        return self._deliver(key, value)

    def reject(self, key: K, error: BaseException, *, keep: bool = True) -> bool:
        """Fails the request `key`. `keep=False`: if nobody waits, forget it (a withdrawal
        is not an answer to keep)."""
        return self._deliver(key, error, keep)

    def reject_waiting(self, error: BaseException) -> int:
        """Fails every request waiting now (later ones are still expected: the peer is not
        gone). Returns how many there were."""
        waiting = [f for f in self._waiting.values() if not f.done()]
        for future in waiting:
            future.set_exception(error)
        return len(waiting)

    def close(self, error: BaseException) -> None:
        """The peer has gone: every waiting request fails with `error`, and so does every
        later `expect` (the first error given is the one kept)."""
        if self.failure is None:
            self.failure = error
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(error)

    def _deliver(self, key: K, outcome: V | BaseException, keep: bool = True) -> bool:
        future = self._waiting.get(key)
        if future is not None:
            _resolve(future, outcome)
            return True
        if keep and self._keep:
            self._unmatched[key] = outcome
            while len(self._unmatched) > self._keep:
                self._unmatched.popitem(last=False)
        return False


def _resolve(future: asyncio.Future[V], outcome: V | BaseException) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
