"""The single owner of stdout. Every frame is one line of JSON, flushed as it is written.

Writes are synchronous on purpose: a frame must be on the pipe before the next step runs,
and the SDKs read line by line. Anything that is not a frame goes to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, BinaryIO, Protocol

from wisp.jsonsafe import encode_utf8
from wisp.jsontypes import JSON


class FrameSink(Protocol):
    def write(self, frame: JSON) -> None: ...


def dumps(frame: Any) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


# The Python SDK refuses stdout lines over 1,048,576 characters and ends the query. Frames
# are mirrors of state the engine keeps in full (the model still gets every byte), so an
# oversized frame is shortened for the client rather than allowed to kill the session.
MAX_LINE_CHARS = 1_000_000
# A client without that limit (wisp.sdk) sets this to 0 and gets every frame whole.
LINE_LIMIT_ENV = "WISP_MAX_LINE_CHARS"


def line_limit(env: Mapping[str, str]) -> int:
    """The longest stdout line this client takes: WISP_MAX_LINE_CHARS (0 = no limit)."""
    try:
        return int(env.get(LINE_LIMIT_ENV, MAX_LINE_CHARS))
    except ValueError:
        return MAX_LINE_CHARS


def fitted_line(frame: Any, limit: int = MAX_LINE_CHARS) -> str:
    line = dumps(frame)
    if limit <= 0:
        return line
    budget = 1 << 16
    while len(line) > limit and budget >= 64:
        line = dumps(_shorten(frame, budget))
        budget //= 2
    return line


def _shorten(value: Any, budget: int) -> Any:
    if isinstance(value, str) and len(value) > budget:
        cut = len(value) - budget
        return f"{value[:budget]}… [{cut} characters not shown: stream-json line limit]"
    if isinstance(value, dict):
        return {k: _shorten(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v, budget) for v in value]
    return value


class NDJSONWriter:
    def __init__(self, stream: BinaryIO | None = None, limit: int = MAX_LINE_CHARS) -> None:
        self._stream = stream if stream is not None else sys.stdout.buffer
        self._limit = limit
        self.broken = False

    def write(self, frame: JSON) -> None:
        self.write_line(fitted_line(frame, self._limit))

    def write_line(self, line: str) -> None:
        if self.broken:
            return
        try:
            # A lone surrogate (a non-UTF-8 file name, a "\udcff" escape) would make a
            # strict encode raise and end the run; it goes out as U+FFFD instead.
            self._stream.write(encode_utf8(line) + b"\n")
            self._stream.flush()
        except (BrokenPipeError, ValueError):
            # The reader went away. Keep running so the transcript is completed, but stop
            # writing: nothing is listening and every write would raise again.
            self.broken = True


class CollectingSink:
    """Keeps frames in memory (json/text output formats and tests)."""

    def __init__(self) -> None:
        self.frames: list[JSON] = []

    def write(self, frame: JSON) -> None:
        self.frames.append(frame)
