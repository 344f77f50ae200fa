"""Reads NDJSON from fd 0 on a thread and hands parsed lines to the event loop.

A thread with `os.read` works for pipes, files and ttys alike (asyncio's pipe reader
refuses regular files), has no line-length limit, and never holds the buffered
`sys.stdin` lock that makes interpreter shutdown abort (see sdk-contract §11.17).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
CHUNK = 1 << 16


@dataclass(frozen=True)
class Line:
    number: int
    frame: JSON | None
    error: str | None = None
    raw_length: int = 0


EOF_MARK = None


def parse_line(number: int, raw: bytes) -> Line | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return Line(number, None, f"invalid JSON ({exc})", len(text))
    if not isinstance(value, dict):
        return Line(number, None, f"expected a JSON object, got {type(value).__name__}",
                    len(text))
    return Line(number, value, None, len(text))


class StdinReader:
    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int = 0) -> None:
        self._loop = loop
        self._fd = fd
        self.queue: asyncio.Queue[Line | None] = asyncio.Queue()
        self._thread = threading.Thread(target=self._run, name="wisp-stdin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _push(self, item: Line | None) -> None:
        self._loop.call_soon_threadsafe(self.queue.put_nowait, item)

    def _run(self) -> None:
        # Only the new chunk is scanned for newlines, so a 10 MB line costs O(n), not O(n²).
        parts: list[bytes] = []
        number = 0
        try:
            while True:
                chunk = os.read(self._fd, CHUNK)
                if not chunk:
                    break
                *complete, rest = chunk.split(b"\n")
                for piece in complete:
                    parts.append(piece)
                    number += 1
                    self._emit(number, b"".join(parts))
                    parts = []
                if rest:
                    parts.append(rest)
        except OSError:
            pass
        finally:
            if parts:
                self._emit(number + 1, b"".join(parts))
            try:
                self._push(EOF_MARK)
            except RuntimeError:
                pass  # the loop is already closed: the process is exiting

    def _emit(self, number: int, raw: bytes) -> None:
        line = parse_line(number, raw)
        if line is not None:
            self._push(line)
