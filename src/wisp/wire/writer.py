"""The single owner of stdout. Every frame is one line of JSON, flushed as it is written.

Writes are synchronous on purpose: a frame must be on the pipe before the next step runs,
and the SDKs read line by line. Anything that is not a frame goes to stderr.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Protocol

JSON = dict[str, Any]


class FrameSink(Protocol):
    def write(self, frame: JSON) -> None: ...


def dumps(frame: Any) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class NDJSONWriter:
    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout.buffer
        self.broken = False

    def write(self, frame: JSON) -> None:
        self.write_line(dumps(frame))

    def write_line(self, line: str) -> None:
        if self.broken:
            return
        try:
            self._stream.write(line.encode("utf-8") + b"\n")
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
