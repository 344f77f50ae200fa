"""Running one command under supervision: bounded output, timeout, abort, no leftovers.

The child gets its own session, so its pid is also its process-group id and one `killpg`
reaches every descendant that did not start a session of its own.

We use `subprocess.Popen` plus `connect_read_pipe` rather than asyncio's subprocess API:
the pid is then known (and registered for the signal handlers) before the first await,
and nothing waits on pipe closure, which a background grandchild can hold open forever.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from wisp.processes import ProcessRegistry, kill_group
from wisp.processes.output import CappedText
from wisp.tools.reaper import become_subreaper

# After the command exits, how long we keep reading pipes that a background grandchild
# may still hold open before killing the group.
PIPE_GRACE_S = 0.5
# Upper bound on waiting for the OS to report that killed processes are gone.
_REAP_WAIT_S = 5.0

Ending = Literal["exited", "timeout", "interrupted"]


class Confinement(Protocol):
    """What a sandboxed launch adds to the spawn (`wisp.sandbox.runner.Launch`)."""

    @property
    def pass_fds(self) -> tuple[int, ...]: ...
    @property
    def preexec_fn(self) -> Callable[[], None] | None: ...


@dataclass
class Outcome:
    returncode: int | None
    stdout: CappedText
    stderr: CappedText
    ending: Ending


class _Sink(asyncio.Protocol):
    """Decodes a pipe straight into a CappedText. It never pauses reading, so the child can
    never block on a full pipe, and memory stays bounded by the CappedText."""

    def __init__(self, text: CappedText, closed: asyncio.Future[None]) -> None:
        self.text = text
        self.closed = closed
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def data_received(self, data: bytes) -> None:
        self.text.add(self._decoder.decode(data))

    def connection_lost(self, exc: Exception | None) -> None:
        self.text.add(self._decoder.decode(b"", final=True))
        if not self.closed.done():
            self.closed.set_result(None)


@dataclass
class _Pipe:
    transport: asyncio.BaseTransport
    closed: asyncio.Future[None]


async def _attach(pipe: IO[bytes], text: CappedText) -> _Pipe:
    loop = asyncio.get_running_loop()
    sink = _Sink(text, loop.create_future())
    transport, _ = await loop.connect_read_pipe(lambda: sink, pipe)
    return _Pipe(transport, sink.closed)


async def _nap(watchers: set[asyncio.Future[Any]], seconds: float) -> bool:
    """Sleep until a watcher fires or `seconds` pass; True if one fired. Fired watchers are
    dropped (a closed pipe or a failed abort waiter must not make the poll a busy loop)."""
    if not watchers:
        await asyncio.sleep(seconds)
        return False
    done, _ = await asyncio.wait(watchers, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for future in done:
        watchers.discard(future)
        if not future.cancelled():
            future.exception()
    return bool(done)


async def wait_for_exit(
    proc: subprocess.Popen[bytes],
    abort: asyncio.Event | None,
    timeout_s: float,
    wake_on: Sequence[asyncio.Future[None]] = (),
) -> Ending:
    """Polls for the child's exit (which also reaps it), waking early on abort or when a
    pipe closes, since a closing pipe usually means the command is finishing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    abort_waiter = asyncio.ensure_future(abort.wait()) if abort is not None else None
    watchers: set[asyncio.Future[Any]] = {f for f in wake_on if not f.done()}
    if abort_waiter is not None:
        watchers.add(abort_waiter)
    delay = 0.005
    try:
        while True:
            if proc.poll() is not None:
                return "exited"
            if abort is not None and abort.is_set():
                return "interrupted"
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            fired = await _nap(watchers, min(delay, remaining))
            # A pipe just closed: the exit is usually a moment away, so look again soon.
            delay = 0.001 if fired else min(delay * 2, 0.1)
    finally:
        if abort_waiter is not None:
            abort_waiter.cancel()


async def _drain(pipes: list[_Pipe], pgid: int) -> None:
    if not pipes:
        return
    _, pending = await asyncio.wait([p.closed for p in pipes], timeout=PIPE_GRACE_S)
    if not pending:
        return
    # Something the command started in the background still holds our pipes; the command
    # is over, so take its process group down with it.
    kill_group(pgid)
    # Only a process that escaped into its own session can keep the pipes open now.
    await asyncio.wait(pending, timeout=_REAP_WAIT_S)


async def _settle(proc: subprocess.Popen[bytes], pipes: list[_Pipe], kill: bool) -> None:
    """Kill if asked, make sure the child is reaped, read what is left in the pipes."""
    if kill or proc.poll() is None:
        kill_group(proc.pid)
        await wait_for_exit(proc, None, _REAP_WAIT_S)
    await _drain(pipes, proc.pid)


def spawn(
    argv: Sequence[str], cwd: Path | None, env: dict[str, str] | None,
    confine: Confinement | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session with piped output. Raises OSError on failure (and
    SubprocessError when `confine`'s preexec step refuses)."""
    become_subreaper()  # anything it leaves running in the background stays ours to end
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=confine.pass_fds if confine is not None else (),
        # Only the Landlock fallback has one: two syscalls on prepared ctypes objects,
        # nothing that takes a lock another thread could hold at fork.
        preexec_fn=confine.preexec_fn if confine is not None else None,  # noqa: PLW1509
    )


async def run_supervised(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: dict[str, str] | None,
    timeout_s: float,
    stdout: CappedText,
    stderr: CappedText,
    abort: asyncio.Event | None,
    registry: ProcessRegistry,
    confine: Confinement | None = None,
) -> Outcome:
    """Runs `argv` to completion (or timeout/abort), always leaving no process behind in
    its group, even when the calling task is cancelled. Raises OSError if it can't start.
    `confine`: the fds and preexec step of a sandboxed launch."""
    proc = spawn(argv, cwd, env, confine)
    # Registered before any await, so an interrupt at any point can reach the group.
    registry.add(proc.pid)
    pipes: list[_Pipe] = []
    ending: Ending | None = None
    try:
        for pipe, text in ((proc.stdout, stdout), (proc.stderr, stderr)):
            if pipe is not None:
                pipes.append(await _attach(pipe, text))
        ending = await wait_for_exit(proc, abort, timeout_s, [p.closed for p in pipes])
    finally:
        try:
            # Shielded so cleanup, once started, finishes even if we are cancelled again.
            await asyncio.shield(_settle(proc, pipes, kill=ending != "exited"))
        finally:
            registry.discard(proc.pid)
            for p in pipes:
                p.transport.close()
            # A pipe we never attached (cancelled first) is still ours to close; closing an
            # attached one again is a no-op, as its transport closed the same file object.
            for raw in (proc.stdout, proc.stderr):
                if raw is not None:
                    with contextlib.suppress(OSError):
                        raw.close()
    return Outcome(proc.returncode, stdout, stderr, ending)
