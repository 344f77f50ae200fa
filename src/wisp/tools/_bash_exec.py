"""Running one shell command under supervision: bounded output, timeout, abort, no leftovers.

The child gets its own session, so its pid is also its process-group id and one `killpg`
reaches every descendant that did not start a session of its own.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wisp.tools.processes import ProcessRegistry, kill_group

# After the shell exits, how long we keep reading pipes that a background grandchild may
# still hold open before killing the group.
PIPE_GRACE_S = 0.5
# Upper bound on waiting for the OS to report a killed child's exit.
_REAP_WAIT_S = 5.0
_READ_CHUNK = 65536

# Room kept for the "[N characters truncated]" marker so clipped text stays within limit.
_MARKER_RESERVE = 64

Segment = str | int  # text we kept, or a count of characters we dropped


@dataclass
class CappedText:
    """Keeps the first and last `keep` characters of a stream and only counts the rest, so
    a chatty command cannot grow our memory without bound."""

    keep: int
    head: str = ""
    total: int = 0
    _tail: list[str] = field(default_factory=list)
    _tail_len: int = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if len(self.head) < self.keep:
            room = self.keep - len(self.head)
            self.head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self.keep:
            trimmed = "".join(self._tail)[-self.keep :]
            self._tail, self._tail_len = [trimmed], len(trimmed)

    def segments(self) -> list[Segment]:
        tail = "".join(self._tail)
        dropped = self.total - len(self.head) - len(tail)
        return [self.head, dropped, tail] if dropped else [self.head + tail]


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


def clip(segments: Sequence[Segment], limit: int) -> tuple[str, int]:
    """At most `limit` characters: the head and the tail, with a marker saying how many
    characters were dropped between them. Returns (text, dropped)."""
    total = seg_len(segments)
    if total <= limit and all(isinstance(s, str) for s in segments):
        return "".join(s for s in segments if isinstance(s, str)), 0
    budget = max(0, limit - _MARKER_RESERVE)
    head = _take(segments, budget // 2)
    tail = _take_back(segments, budget - len(head))
    dropped = total - len(head) - len(tail)
    return f"{head}\n\n... [{dropped} characters truncated] ...\n\n{tail}", dropped


Ending = Literal["exited", "timeout", "interrupted"]


@dataclass
class Outcome:
    returncode: int | None
    stdout: CappedText
    stderr: CappedText
    ending: Ending


async def _drain(reader: asyncio.StreamReader | None, sink: CappedText) -> None:
    if reader is None:
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await reader.read(_READ_CHUNK)
        if not chunk:
            break
        sink.add(decoder.decode(chunk))
    sink.add(decoder.decode(b"", final=True))


async def _wait_for_exit(
    proc: asyncio.subprocess.Process, abort: asyncio.Event | None, timeout_s: float
) -> Ending:
    """Waits for the shell itself to exit. `proc.wait()` alone is not enough: asyncio only
    resolves it once every pipe is closed, which a background grandchild can delay forever,
    so we also poll `returncode`, which is set as soon as the child is reaped."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    watchers: set[asyncio.Future[Any]] = {asyncio.ensure_future(proc.wait())}
    if abort is not None:
        watchers.add(asyncio.ensure_future(abort.wait()))
    delay = 0.01
    try:
        while True:
            if proc.returncode is not None:
                return "exited"
            if abort is not None and abort.is_set():
                return "interrupted"
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            await _nap(watchers, min(delay, remaining))
            delay = min(delay * 2, 0.2)
    finally:
        for watcher in watchers:
            watcher.cancel()


async def _nap(watchers: set[asyncio.Future[Any]], seconds: float) -> None:
    """Sleep until a watcher fires or `seconds` pass. A watcher that failed (say, an abort
    Event bound to another loop) is dropped, so it cannot turn the poll into a busy loop."""
    if not watchers:
        await asyncio.sleep(seconds)
        return
    done, _ = await asyncio.wait(watchers, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for future in done:
        if not future.cancelled() and future.exception() is not None:
            watchers.discard(future)


async def _finish_readers(readers: list[asyncio.Task[None]], pgid: int) -> None:
    _, pending = await asyncio.wait(readers, timeout=PIPE_GRACE_S)
    if not pending:
        return
    # Something the command started in the background still holds our pipes; the command
    # is over, so take its process group down with it.
    kill_group(pgid)
    _, pending = await asyncio.wait(pending, timeout=PIPE_GRACE_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


async def run_supervised(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None,
    timeout_s: float,
    keep: int,
    abort: asyncio.Event | None,
    registry: ProcessRegistry,
) -> Outcome:
    """Runs `argv` in a new session. Raises OSError if it cannot be started."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    pgid = proc.pid
    registry.add(pgid)
    out, err = CappedText(keep), CappedText(keep)
    readers = [
        asyncio.create_task(_drain(proc.stdout, out)),
        asyncio.create_task(_drain(proc.stderr, err)),
    ]
    ending: Ending | None = None
    try:
        ending = await _wait_for_exit(proc, abort, timeout_s)
    finally:
        # Also runs when the call is cancelled: the command must not outlive it. Shielded
        # so that cleanup, once started, finishes even if we are cancelled again.
        try:
            await asyncio.shield(_settle(proc, readers, kill=ending != "exited"))
        finally:
            for task in readers:
                task.cancel()
            registry.discard(pgid)
    return Outcome(proc.returncode, out, err, ending)


async def _settle(
    proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]], kill: bool
) -> None:
    """Kill if asked, make sure the shell is reaped, drain what is left in the pipes."""
    if kill or proc.returncode is None:
        kill_group(proc.pid)
        await _wait_for_exit(proc, None, _REAP_WAIT_S)
    await _finish_readers(readers, proc.pid)
    with contextlib.suppress(TimeoutError):
        # Lets asyncio close the transport now rather than complain about it at exit.
        await asyncio.wait_for(proc.wait(), PIPE_GRACE_S)
