"""Bounded capture of a command's output: keep the head and the tail, count the middle."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

# Room kept for the "[N characters truncated]" marker so clipped text stays within limit.
_MARKER_RESERVE = 64

Segment = str | int  # text we kept, or a count of characters we dropped


class CappedText:
    """Keeps the first and last `keep` characters of a stream and only counts the rest, so
    a chatty command cannot grow our memory without bound. `keep_tail=False` keeps only
    the head, for consumers that read results from the top. (A plain class: the hook
    runner loads this module on every run, and a dataclass costs ~1 ms to define.)"""

    __slots__ = ("_file", "_head", "_head_len", "_spill", "_tail", "_tail_len", "keep",
                 "keep_tail", "spill_path", "total")

    def __init__(self, keep: int, keep_tail: bool = True, spill: bool = False) -> None:
        """`spill`: once the middle would be dropped, everything (from the first
        character) is also written to a file, `spill_path`, so the whole output stays
        reachable while memory stays bounded."""
        self.keep = keep
        self.keep_tail = keep_tail
        # The head is kept in pieces too: appending many small chunks to one string would
        # copy it each time (quadratic in `keep` for a command that prints a byte at a time).
        self._head: list[str] = []
        self._head_len = 0
        self.total = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self._spill = spill  # not started yet
        self._file: IO[str] | None = None
        self.spill_path: str | None = None

    def add(self, text: str) -> None:
        self.total += len(text)
        if self._file is not None:
            self._file.write(text)
        if self._head_len < self.keep:
            room = self.keep - self._head_len
            piece = text[:room]
            self._head.append(piece)
            self._head_len += len(piece)
            text = text[room:]
        if not text or not self.keep_tail:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self.keep:
            if self._spill:
                self._start_spill()
            trimmed = "".join(self._tail)[-self.keep :]
            self._tail, self._tail_len = [trimmed], len(trimmed)

    @property
    def head(self) -> str:
        """The first `keep` characters."""
        if len(self._head) > 1:
            self._head = ["".join(self._head)]
        return self._head[0] if self._head else ""

    def _start_spill(self) -> None:
        """Nothing was dropped yet: the file starts with all of it."""
        self._spill = False
        opened = open_output_file("bash-")
        if opened is None:
            return  # no room for it: the output is only clipped
        handle, path = opened
        try:
            handle.write(self.head + "".join(self._tail))
        except OSError:
            handle.close()
            return
        self._file, self.spill_path = handle, path

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def segments(self) -> list[Segment]:
        tail = "".join(self._tail)
        dropped = self.total - len(self.head) - len(tail)
        return [self.head, dropped, tail] if dropped else [self.head + tail]


def open_output_file(prefix: str) -> tuple[IO[str], str] | None:
    """A new file for a tool's whole output, in a folder of this user's only, under a
    name made here (never one a model or a server chose); None when there is no room."""
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"wisp-{os.getuid()}", "output")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, path = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".txt")
        return os.fdopen(fd, "w", encoding="utf-8", errors="replace"), path
    except OSError:
        return None


def save_output(text: str, prefix: str) -> str | None:
    """`text` in a new output file (see open_output_file): its path, or None."""
    opened = open_output_file(prefix)
    if opened is None:
        return None
    handle, path = opened
    try:
        with handle:
            handle.write(text)
    except OSError:
        return None
    return path


def strip_trailing_newlines(segments: list[Segment]) -> list[Segment]:
    if segments and isinstance(segments[-1], str):
        return [*segments[:-1], segments[-1].rstrip("\r\n")]
    return segments


def seg_len(segments: Sequence[Segment]) -> int:
    return sum(len(s) if isinstance(s, str) else s for s in segments)


def _take(segments: Sequence[Segment], count: int) -> str:
    taken: list[str] = []
    for seg in segments:
        if isinstance(seg, int) or count <= 0:
            break
        taken.append(seg[:count])
        count -= len(taken[-1])
    return "".join(taken)


def _take_back(segments: Sequence[Segment], count: int) -> str:
    if count <= 0:
        return ""
    reversed_text = [s[::-1] if isinstance(s, str) else s for s in reversed(segments)]
    return _take(reversed_text, count)[::-1]


def clip(segments: Sequence[Segment], limit: int, saved_in: str | None = None
         ) -> tuple[str, int]:
    """At most `limit` characters: the head and the tail, with a marker saying how many
    characters were dropped between them (and, with `saved_in`, which file holds all of
    it). Returns (text, dropped)."""
    total = seg_len(segments)
    if total <= limit and all(isinstance(s, str) for s in segments):
        return "".join(s for s in segments if isinstance(s, str)), 0
    where = f"; all of it is in {saved_in}" if saved_in else ""
    budget = max(0, limit - _MARKER_RESERVE - len(where))
    head = _take(segments, budget // 2)
    tail = _take_back(segments, budget - len(head))
    dropped = total - len(head) - len(tail)
    return f"{head}\n\n... [{dropped} characters truncated{where}] ...\n\n{tail}", dropped
