"""A terminal UI on a pseudo-terminal, read continuously and stamped, for bench/tui.py.

`Term.spawn` starts a program as the session leader of a new pty of a fixed size (its
controlling terminal, so it gets SIGWINCH and job control as in a real terminal). A reader
thread appends everything the program writes to one byte buffer and stamps each read with
`time.perf_counter()`, so "when did these bytes arrive" is a lookup, not a poll. The reader
also answers the terminal queries a real terminal answers (cursor position, device
attributes): without an answer prompt_toolkit waits 2 s and prints a warning, and a program
may hold its first frame for them.

Times are perf_counter seconds, i.e. CLOCK_MONOTONIC on Linux: comparable with
`time.monotonic()` stamps taken in another process (the scripted server's).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import signal
import termios
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ptyprocess import PtyProcess

CPR_REQUEST = b"\x1b[6n"
DA1_REQUESTS = (b"\x1b[c", b"\x1b[0c")
DA1_ANSWER = b"\x1b[?1;2c"  # what tmux answers: a VT100 with advanced video
# Cursor moves that change the row, for the crude row tracking a CPR answer needs.
_ROW_MOVES = re.compile(rb"\n|\x1b\[(\d*)([ABH])|\x1b\[(\d+);\d+[Hf]|\x1b\[6n")
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchTimeout(RuntimeError):
    """The UI did not show what it was expected to in time."""


class Term:
    def __init__(self, proc: PtyProcess, t0: float, rows: int, cols: int) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self.fd: int = proc.fd
        self.t0 = t0  # perf_counter just before the spawn
        self.rows, self.cols = rows, cols
        self._buf = bytearray()
        self._offsets: list[int] = []  # end offset of each read
        self._stamps: list[float] = []  # its perf_counter time
        self._cond = threading.Condition()
        self._eof = False
        self._row = 1  # where the cursor is, roughly (1-based), for CPR answers
        self._tail = b""  # the end of the previous read: a query split across reads
        self.cpr_answered = 0
        self._reader = threading.Thread(target=self._read, daemon=True, name="tui-pty-reader")
        self._reader.start()

    @classmethod
    def spawn(cls, argv: Sequence[str], env: dict[str, str], cwd: Path, rows: int = 30,
              cols: int = 100) -> Term:
        t0 = time.perf_counter()
        proc = PtyProcess.spawn(list(argv), cwd=str(cwd), env=env, dimensions=(rows, cols))
        return cls(proc, t0, rows, cols)

    # Reading -----------------------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:  # EIO: the child side closed
                chunk = b""
            t = time.perf_counter()
            if not chunk:
                with self._cond:
                    self._eof = True
                    self._cond.notify_all()
                return
            self._answer_queries(chunk)
            with self._cond:
                self._buf += chunk
                self._offsets.append(len(self._buf))
                self._stamps.append(t)
                self._cond.notify_all()

    def _answer_queries(self, chunk: bytes) -> None:
        scan, lead = self._tail + chunk, len(self._tail)
        self._tail = chunk[-4:]
        for query in DA1_REQUESTS:  # each one ending in this read, once
            at = scan.find(query)
            while at >= 0:
                if at + len(query) > lead:
                    self.write(DA1_ANSWER)
                at = scan.find(query, at + 1)
        for match in _ROW_MOVES.finditer(chunk):
            if match.group(0) == b"\n":
                self._row = min(self.rows, self._row + 1)
            elif match.group(0) == CPR_REQUEST:
                self.write(b"\x1b[%d;1R" % self._row)
                self.cpr_answered += 1
            elif match.group(3):
                self._row = max(1, min(self.rows, int(match.group(3))))
            elif match.group(2) == b"H":
                self._row = 1
            else:
                n = int(match.group(1) or 1)
                delta = -n if match.group(2) == b"A" else n
                self._row = max(1, min(self.rows, self._row + delta))

    @property
    def size(self) -> int:
        """Bytes read so far: an offset to search from."""
        with self._cond:
            return len(self._buf)

    def time_at(self, offset: int) -> float:
        """When the byte at `offset` arrived (perf_counter)."""
        with self._cond:
            i = bisect.bisect_right(self._offsets, offset)
            return self._stamps[min(i, len(self._stamps) - 1)]

    def wait_for(self, needle: bytes, start: int, timeout: float) -> tuple[int, float]:
        """The first `needle` at or after offset `start`: its end offset and the time the
        read completing it arrived."""
        deadline = time.perf_counter() + timeout
        with self._cond:
            while True:
                at = self._buf.find(needle, max(0, start))
                if at >= 0:
                    end = at + len(needle)
                    i = bisect.bisect_left(self._offsets, end)
                    return end, self._stamps[i]
                left = deadline - time.perf_counter()
                if left <= 0 or self._eof:
                    why = "exited" if self._eof else f"no {needle!r} within {timeout:g}s"
                    raise BenchTimeout(f"{why}; last output: {self.tail_text()!r}")
                self._cond.wait(left)

    def wait_any(self, needles: Sequence[bytes], start: int, timeout: float
                 ) -> tuple[int, int, float]:
        """Like `wait_for`, for whichever of `needles` shows first: (index, end, time)."""
        deadline = time.perf_counter() + timeout
        with self._cond:
            while True:
                found = [(at, i) for i, n in enumerate(needles)
                         if (at := self._buf.find(n, max(0, start))) >= 0]
                if found:
                    at, i = min(found)
                    end = at + len(needles[i])
                    k = bisect.bisect_left(self._offsets, end)
                    return i, end, self._stamps[k]
                left = deadline - time.perf_counter()
                if left <= 0 or self._eof:
                    raise BenchTimeout(f"none of {list(needles)!r} within {timeout:g}s; "
                                       f"last output: {self.tail_text()!r}")
                self._cond.wait(left)

    def quiet(self, seconds: float, timeout: float) -> bool:
        """Waits until nothing was written for `seconds`; False if that never happened."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self._cond:
                last = self._stamps[-1] if self._stamps else self.t0
            idle = time.perf_counter() - last
            if idle >= seconds:
                return True
            time.sleep(min(seconds - idle, max(0.0, deadline - time.perf_counter())) + 0.001)
        return False

    def bytes_between(self, t_from: float, t_to: float) -> int:
        with self._cond:
            i = bisect.bisect_left(self._stamps, t_from)
            j = bisect.bisect_right(self._stamps, t_to)
            before = self._offsets[i - 1] if i > 0 else 0
            return (self._offsets[j - 1] if j > 0 else 0) - before

    def tail_text(self, n: int = 300) -> str:
        return bytes(self._buf[-n:]).decode("utf-8", "replace")

    # Writing and state -------------------------------------------------------------------

    def write(self, data: bytes | str) -> float:
        """Writes to the program's input; returns the perf_counter time just before."""
        raw = data.encode() if isinstance(data, str) else data
        t = time.perf_counter()
        os.write(self.fd, raw)
        return t

    def raw_mode(self) -> bool:
        """Whether the program has put its terminal in raw mode (no echo, no line editing).
        Before that the kernel echoes typed keys itself. (termios on the master side reads
        the slave's settings.)"""
        lflag = termios.tcgetattr(self.fd)[3]
        return not lflag & (termios.ECHO | termios.ICANON)

    def alive(self) -> bool:
        return self.proc.isalive()

    def rss_mb(self) -> float:
        return _status_kb(self.pid, "VmRSS") / 1024

    def hwm_mb(self) -> float:
        return _status_kb(self.pid, "VmHWM") / 1024

    def cpu_s(self) -> float:
        """utime + stime of the process (all its threads, live or ended)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/task"))

    def close(self, exit_keys: Sequence[bytes] = (), grace: float = 5.0) -> int | None:
        """Asks the program to exit with `exit_keys` (sent 0.15 s apart), waits `grace`
        seconds, then kills its whole process group. Returns the exit status if it left
        by itself."""
        status = None
        try:
            for key in exit_keys:
                if not self.alive():
                    break
                with contextlib.suppress(OSError):
                    self.write(key)
                time.sleep(0.15)
            deadline = time.monotonic() + grace
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.02)
            if not self.alive():
                status = self.proc.exitstatus
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)  # its tools and helpers too
            with contextlib.suppress(Exception):
                self.proc.close(force=True)
            self._reader.join(2)
        return status


def _status_kb(pid: int, key: str) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith(key + ":"):
            return int(row.split()[1])
    raise RuntimeError(f"{key} missing from /proc/{pid}/status")
