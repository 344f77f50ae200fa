"""Spawning a CLI and stamping what it prints.

Times are `time.perf_counter()` seconds since just before the spawn, so fork/exec and the
interpreter's or binary's start-up count, as a client sees them. Peak RSS comes from
`os.wait4`, i.e. the kernel's own high-water mark for the child (and any children it
reaped, such as Bash tools), with no polling to miss a spike.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

JSON = dict[str, Any]

_EOF = object()


@dataclass(frozen=True)
class Line:
    t: float  # seconds since spawn
    raw: bytes
    frame: JSON | None  # None when the line is not a JSON object

    @property
    def kind(self) -> str:
        if self.frame is None:
            return ""
        kind = str(self.frame.get("type", ""))
        return f"{kind}/{self.frame['subtype']}" if kind == "system" else kind


@dataclass(frozen=True)
class Exit:
    t: float
    returncode: int
    maxrss_mb: float
    cpu: float  # user + system seconds: less sensitive than wall time to other load


class BenchError(RuntimeError):
    """A run did not behave as the scenario expects (wrong frames, hang, crash)."""


@dataclass
class Child:
    """A spawned CLI whose stdout lines arrive, stamped, on a queue."""

    proc: subprocess.Popen[bytes]
    t0: float
    stderr_path: Path
    lines: queue.Queue[Line | object] = field(default_factory=queue.Queue)
    max_line: int = 0  # longest stdout line seen, in bytes
    stdout_bytes: int = 0
    _eof: bool = False

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def send(self, frame: JSON) -> float:
        """Write one NDJSON frame to stdin; returns when it was written."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        return self.now()

    def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def next_line(self, timeout: float) -> Line | None:
        """The next stdout line, or None at EOF."""
        if self._eof:
            return None
        try:
            item = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise BenchError(f"no output for {timeout:g}s; stderr: {self.stderr_tail()}") from None
        if item is _EOF:
            self._eof = True
            return None
        assert isinstance(item, Line)
        return item

    def wait_for(self, pred: Callable[[Line], bool], timeout: float = 60.0) -> Line:
        """Skip lines until one matches; a BenchError at EOF or after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next_line(max(0.01, deadline - time.monotonic()))
            if line is None:
                raise BenchError(f"stdout ended early; stderr: {self.stderr_tail()}")
            if pred(line):
                return line

    def drain(self, timeout: float = 60.0) -> list[Line]:
        """Every remaining line up to EOF."""
        deadline = time.monotonic() + timeout
        rest: list[Line] = []
        while (line := self.next_line(max(0.01, deadline - time.monotonic()))) is not None:
            rest.append(line)
        return rest

    def finish(self, timeout: float = 60.0) -> Exit:
        """Read to EOF, then reap the child with wait4 for its exit time and peak RSS."""
        self.drain(timeout)
        # wait4 blocks; a watchdog turns a child that closed stdout but hangs into a kill.
        watchdog = threading.Timer(timeout, self.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(self.proc.pid, 0)
        finally:
            watchdog.cancel()
        t = self.now()
        self.proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        self.close_stdin()
        if self.proc.returncode == 0:  # stderr is kept only to explain failures
            self.stderr_path.unlink(missing_ok=True)
        cpu = usage.ru_utime + usage.ru_stime
        return Exit(t, self.proc.returncode, usage.ru_maxrss / 1024, cpu)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stderr_tail(self, limit: int = 600) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-limit:].strip()
        except OSError:
            return ""

    def cpu_s(self) -> float:
        """CPU seconds the running child has used so far, summed over its live threads
        (/proc/<pid>/task/*/schedstat, in nanoseconds: per-turn windows are a few ms, below
        the 10 ms tick of /proc/<pid>/stat)."""
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError, IndexError):  # a thread just ended
                total += int((task / "schedstat").read_text().split()[0])
        return total / 1e9

    def hwm_mb(self) -> float:
        """The child's own peak RSS so far (VmHWM), read while it is still running."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        for row in status.splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
        raise BenchError("VmHWM missing from /proc status")


def spawn(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    stdin: bool = False,
    keep_raw: bool = False,
) -> Child:
    """Start `argv`; a reader thread stamps each stdout line as it completes."""
    stderr_path = cwd / f".stderr-{time.monotonic_ns()}"
    with stderr_path.open("wb") as stderr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=True,  # so a kill takes the CLI's tool processes too
        )
    child = Child(proc, t0, stderr_path)
    assert proc.stdout is not None
    reader = threading.Thread(
        target=_read_lines, args=(child, proc.stdout, keep_raw), daemon=True, name="bench-reader"
    )
    reader.start()
    return child


def _read_lines(child: Child, stdout: IO[bytes], keep_raw: bool) -> None:
    """Split raw reads into lines, stamping a line when its newline arrives."""
    fd = stdout.fileno()
    pending = bytearray()
    while chunk := os.read(fd, 1 << 16):
        t = child.now()
        child.stdout_bytes += len(chunk)
        # Only the new chunk is searched: rescanning `pending` would be quadratic on the
        # multi-megabyte lines of the 10 MB scenario.
        start = 0
        while (cut := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:cut]
            raw = bytes(pending)
            pending.clear()
            start = cut + 1
            child.max_line = max(child.max_line, len(raw))
            child.lines.put(Line(t, raw if keep_raw or len(raw) < 4096 else b"", _parse(raw)))
        pending += chunk[start:]
    if pending:
        child.max_line = max(child.max_line, len(pending))
    child.lines.put(_EOF)


def _parse(raw: bytes) -> JSON | None:
    if not raw.startswith(b"{") or len(raw) > 1 << 20:
        return None  # huge lines are only measured, never inspected
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
