"""An in-memory control channel: two `Dispatcher`s wired to each other, no processes.

    from wisp.testing import ControlChannel

    async with ControlChannel() as channel:
        channel.b.register("ping", handler)
        answer = await channel.a.request({"subtype": "ping"})
        assert channel.a_sent[0]["type"] == "control_request"

Each side writes to a `FramePipe` (a `wisp.wire.writer.FrameSink`). The pipe encodes every
frame as the NDJSON line stdout would carry and parses it back, so a frame that could not
cross the real wire fails here too, and the receiver never shares objects with the sender.
Frames arrive in order, each on a later turn of the event loop, as lines from a pipe do.
`close_a()` is side a's stdout reaching EOF: side b then does what the duplex server does
at EOF (`close()`, then `drain()`).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

from wisp.control.dispatcher import Dispatcher
from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON
from wisp.wire.writer import fitted_line

__all__ = ["ControlChannel", "FramePipe"]



class FramePipe:
    """A FrameSink whose frames can be read back, in order, from a queue."""

    def __init__(self) -> None:
        self.frames: list[JSON] = []  # everything written, as the reader receives it
        self.closed = False
        self._queue: asyncio.Queue[JSON | None] = asyncio.Queue()

    def write(self, frame: JSON) -> None:
        if self.closed:
            raise BrokenPipeError("the in-memory pipe is closed")
        line = fitted_line(frame)  # what NDJSONWriter would put on stdout
        received = loads_bounded(line)
        self.frames.append(received)
        self._queue.put_nowait(received)

    def close(self) -> None:
        """End of file: the reader sees it after every frame already written."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def read(self) -> JSON | None:
        """The next frame, or None at end of file."""
        return await self._queue.get()

    @property
    def pending(self) -> int:
        """Frames written but not read yet."""
        return self._queue.qsize()


class ControlChannel:
    """Dispatchers `a` and `b`; what one writes, the other `receive`s."""

    def __init__(self) -> None:
        self.a_pipe = FramePipe()
        self.b_pipe = FramePipe()
        self.a = Dispatcher(self.a_pipe)
        self.b = Dispatcher(self.b_pipe)
        self._pumps: list[asyncio.Task[None]] = []

    @property
    def a_sent(self) -> list[JSON]:
        return self.a_pipe.frames

    @property
    def b_sent(self) -> list[JSON]:
        return self.b_pipe.frames

    def start(self) -> None:
        """Start delivering (inside a running event loop). `async with` does it."""
        if not self._pumps:
            self._pumps = [
                asyncio.ensure_future(_pump(self.a_pipe, self.b)),
                asyncio.ensure_future(_pump(self.b_pipe, self.a)),
            ]

    def close_a(self) -> None:
        """Side a stops writing (its stdout closes): b sees EOF after what is in flight."""
        self.a_pipe.close()

    def close_b(self) -> None:
        self.b_pipe.close()

    async def flush(self, rounds: int = 5) -> None:
        """Let every frame in flight arrive and the handlers it starts take a few steps."""
        for _ in range(1000):
            if not (self.a_pipe.pending or self.b_pipe.pending):
                break
            await asyncio.sleep(0)
        for _ in range(rounds):
            await asyncio.sleep(0)

    async def aclose(self, grace: float = 0.1) -> None:
        """Close both directions and let each side handle EOF. Handlers still running after
        `grace` seconds (one waiting forever on purpose) are left to the event loop's end."""
        self.close_a()
        self.close_b()
        if self._pumps:
            done, pending = await asyncio.wait(self._pumps, timeout=grace)
            for task in pending:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for task in done:
                task.result()  # a pump that failed fails the test

    async def __aenter__(self) -> ControlChannel:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def _pump(source: FramePipe, target: Dispatcher) -> None:
    while (frame := await source.read()) is not None:
        target.receive(frame)
    target.close()  # EOF, as the duplex server handles it
    await target.drain()
