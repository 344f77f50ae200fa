"""What every `ModelStream` shares: the async context manager, the readers it closes, and
(for a stream over an HTTP response) the close that drops or reuses the connection.

A subclass opens in `_open` and yields the events from `_events`; each generator reading
the body is added to `_readers`, so `aclose` can close it rather than leave it to the
garbage collector (asyncio's async-generator finalizer costs a task per generator).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.models.base import close_readers

if TYPE_CHECKING:
    from typing import Self

    from wisp.models.http import HTTPResponse

# After the end of a message only the final chunk is left, and it normally arrives with it.
# Reading it lets the connection be reused; a server that holds it back costs at most this.
FINISH_GRACE = 1.0


class StreamBase:
    """`async with` opens the stream and closes it on the way out; iterating it runs
    `_events`."""

    def __init__(self) -> None:
        self.request_id: str | None = None
        self._readers: list[AsyncGenerator[Any, None]] = []

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncIterator[JSON]:
        events = self._events()
        self._readers.append(events)
        return events

    async def aclose(self) -> None:
        await self._close_readers()

    async def _close_readers(self) -> None:
        readers, self._readers = self._readers, []
        await close_readers(readers)

    async def _open(self) -> object:
        raise NotImplementedError

    def _events(self) -> AsyncGenerator[JSON, None]:
        raise NotImplementedError


class ResponseStream(StreamBase):
    """A stream over one HTTP response. Closing it before the end (`_complete` unset) drops
    the socket, which is how an interrupt stops a turn, and an iteration in progress then
    just ends; after the end the connection goes back to the pool instead."""

    def __init__(self) -> None:
        super().__init__()
        self._response: HTTPResponse | None = None
        self._closed = False
        self._complete = False  # the message ended: only the final chunk can be left

    async def aclose(self) -> None:
        self._closed = True
        await self._close_readers()
        if self._response is not None:
            if self._complete:  # read the final chunk, to reuse the socket
                await self._response.finish(FINISH_GRACE)
            await self._response.aclose()
