"""Reads NDJSON from fd 0 on a thread and hands parsed lines to the event loop.

A thread with `os.read` works for pipes, files and ttys alike (asyncio's pipe reader
refuses regular files), has no line-length limit, and never holds the buffered
`sys.stdin` lock that makes interpreter shutdown abort (docs/protocol.md, "Process behaviour").

`parse_line` is also used before the event loop exists (`wisp.duplex.early`), so asyncio
and threading are imported only by the reader itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, NamedTuple, Protocol

from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON
from wisp.wire.protocol import StdinFrame, stdin_frame

if TYPE_CHECKING:
    import asyncio

CHUNK = 1 << 16


class Line(NamedTuple):
    """One stdin line. `frame` is the JSON object as read (None with `error` when the
    line is not one); `message` is the same object as its typed frame, or None when it
    isn't one of the frames the protocol defines in a usable shape (an unknown type, a
    user frame without content, a control frame without its object)."""

    number: int
    frame: JSON | None
    error: str | None = None
    raw_length: int = 0
    message: StdinFrame | None = None


EOF_MARK = None


def parse_line(number: int, raw: bytes) -> Line | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = loads_bounded(text)
    except ValueError as exc:  # malformed, not UTF-8, or nested too deep (JSONTooDeep)
        return Line(number, None, f"invalid JSON ({exc})", len(text))
    if not isinstance(value, dict):
        return Line(number, None, f"expected a JSON object, got {type(value).__name__}", len(text))
    return Line(number, value, None, len(text), stdin_frame(value))


class FrameReader(Protocol):
    """Where a duplex session's input lines come from: stdin (`StdinReader`) or an
    in-process SDK (`wisp.sdk`), which puts `Line`s on the queue itself."""

    queue: asyncio.Queue[Line | None]

    def start(self) -> None: ...


class StdinReader:
    """`initial` holds bytes already read from fd 0 before the loop started (the early
    initialize answer, `wisp.duplex.early`), numbered from `first_line`; `eof` says fd 0
    already reported end of file."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fd: int = 0,
        *,
        initial: bytes = b"",
        first_line: int = 1,
        eof: bool = False,
    ) -> None:
        import asyncio
        import threading

        self._loop = loop
        self._fd = fd
        self.queue: asyncio.Queue[Line | None] = asyncio.Queue()
        self._thread = threading.Thread(target=self._run, name="wisp-stdin", daemon=True)
        self._initial = initial
        self._eof = eof
        self._parts: list[bytes] = []
        self._number = first_line - 1

    def start(self) -> None:
        self._thread.start()

    def _push(self, item: Line | None) -> None:
        self._loop.call_soon_threadsafe(self.queue.put_nowait, item)

    def _run(self) -> None:
        try:
            self._feed(self._initial)
            while not self._eof:
                chunk = os.read(self._fd, CHUNK)
                if not chunk:
                    break
                self._feed(chunk)
        except OSError:
            pass
        finally:
            if self._parts:
                self._emit(self._number + 1, b"".join(self._parts))
            with contextlib.suppress(RuntimeError):  # the loop is closed: we are exiting
                self._push(EOF_MARK)

    def _feed(self, chunk: bytes) -> None:
        # Only the new chunk is scanned for newlines, so a 10 MB line costs O(n), not O(n²).
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            self._parts.append(piece)
            self._number += 1
            self._emit(self._number, b"".join(self._parts))
            self._parts = []
        if rest:
            self._parts.append(rest)

    def _emit(self, number: int, raw: bytes) -> None:
        # No single line may end this thread: without it nothing is read any more, and the
        # session never sees EOF. Whatever parsing raises is that line's input error.
        try:
            line = parse_line(number, raw)
        except Exception as exc:
            sys.stderr.write(f"wisp: warning: stdin line {number}: {exc!r}\n")
            line = Line(number, None, f"unreadable line ({type(exc).__name__})", len(raw))
        if line is not None:
            self._push(line)
