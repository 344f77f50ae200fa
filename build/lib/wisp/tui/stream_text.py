"""Streaming Markdown in pieces: what of an answer so far is finished and can go to the
scrollback, and what is still the live tail.

An answer is cut at block boundaries only: a blank line outside a code fence ends a
prose block, and a closing fence ends a code block. A code block that grows long is also
committed a run of whole lines at a time, so a 500-line listing never makes the live
region taller than the screen. Each committed piece is rendered once; the live tail is
the only thing rendered again while the answer streams (at most ~30 times a second), so
the cost of a redraw does not grow with the answer.
"""

from __future__ import annotations

from typing import Literal

PieceKind = Literal["prose", "code"]
CODE_LINES_PER_PIECE = 12


class Piece:
    """`continued`: the rest of a code block whose start was committed before it closed
    (printed with no gap, so the block reads as one)."""

    __slots__ = ("continued", "kind", "language", "text")

    def __init__(self, kind: PieceKind, text: str, language: str = "",
                 continued: bool = False) -> None:
        self.kind = kind
        self.text = text
        self.language = language
        self.continued = continued

    def __repr__(self) -> str:
        return f"Piece({self.kind!r}, {self.text!r}, {self.language!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Piece) and (self.kind, self.text, self.language)
                == (other.kind, other.text, other.language))

    __hash__ = None  # type: ignore[assignment]


def _fence_of(line: str) -> str | None:
    """The fence marker (``` or ~~~, three or more) a line opens or closes with."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for mark in ("```", "~~~"):
        if stripped.startswith(mark):
            return stripped[: len(stripped) - len(stripped.lstrip(mark[0]))]
    return None


class StreamingMarkdown:
    """Feed text deltas with `add`; take finished pieces with `take`; `tail()` is the live
    part. `finish()` ends the block: everything left becomes pieces."""

    def __init__(self) -> None:
        self._pending = ""  # text not yet split into lines (no newline yet)
        self._block: list[str] = []  # whole lines of the block being built
        self._fence: str | None = None  # the open fence's marker
        self._language = ""
        self._code_started = False  # part of the open fence's code was committed
        self._ready: list[Piece] = []

    def add(self, delta: str) -> None:
        text = self._pending + delta
        lines = text.split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        fence = _fence_of(line)
        if self._fence is None:
            if fence is not None:
                self._flush_prose()
                self._fence, self._language = fence, line.strip()[len(fence):].strip()
                self._code_started = False
            elif line.strip():
                self._block.append(line)
            else:
                self._flush_prose()
            return
        if fence is not None and fence.startswith(self._fence) and not line.strip()[
                len(fence):].strip():
            self._flush_code()
            self._fence = None
            return
        self._block.append(line)
        if len(self._block) >= CODE_LINES_PER_PIECE:
            self._flush_code()

    def _flush_prose(self) -> None:
        if self._block:
            self._ready.append(Piece("prose", "\n".join(self._block)))
            self._block = []

    def _flush_code(self) -> None:
        if self._block:
            self._ready.append(Piece("code", "\n".join(self._block), self._language,
                                     continued=self._code_started))
            self._code_started = True
            self._block = []

    def take(self) -> list[Piece]:
        ready, self._ready = self._ready, []
        return ready

    def tail(self) -> Piece | None:
        lines = [*self._block, self._pending] if self._pending else self._block
        text = "\n".join(lines)
        if not text.strip():
            return None
        if self._fence is not None:
            return Piece("code", text, self._language, continued=self._code_started)
        return Piece("prose", text)

    def finish(self) -> list[Piece]:
        if self._pending:
            self._line(self._pending)
            self._pending = ""
        if self._fence is not None:
            self._flush_code()
            self._fence = None
        else:
            self._flush_prose()
        return self.take()
