"""What the terminal UI library costs: prompt_toolkit + rich (inline) against textual.

    .venv/bin/python bench/tui_libs.py [--repeat 5] [--heavy-repeat 1] [--idle-window 3]
                                       [--incremental N]

Every measurement runs in a fresh interpreter (`sys.executable -c <program>`), so no run
inherits another's imports, caches or heap. The programs are the strings below:

1. import time: wall and CPU time of `python -c "import X"` minus `python -c "pass"` timed
   in the same round, plus the `-X importtime` cumulative figure for X's top-level packages;
2. idle: a minimal inline prompt_toolkit Application (pipe input, output to a real pty;
   with its default terminal-size polling and without) and a textual App with an Input
   (`run_test()`, headless), side by side; RSS once idle, then the CPU time and wake-ups
   (context switches) over --idle-window seconds, read from /proc;
3. 1,000 messages, the same texts for both: textual mounts one `Markdown` widget per
   message; rich prints `Markdown(text)` to a pty, which is what printing a finished turn
   into the scrollback costs. Time, CPU time and RSS before and after.

The textual 1,000-message run costs ~30-40 s of CPU on a 2-core machine, so it defaults to
--heavy-repeat 1 to keep the whole run under ~3 minutes. --incremental N adds textual
mounting N messages one at a time, as a chat appends finished turns (slow: off by default).
textual is not a wisp dependency: without it, its rows are skipped with a note.

Prints a markdown table and writes it, with the raw samples as JSON, to
bench/results/tui_libs-<utc time>.{md,json}.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fcntl
import importlib.metadata
import importlib.util
import json
import os
import platform
import pty
import re
import resource
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.provenance import git_head, log

BENCH = Path(__file__).resolve().parent
JSON = dict[str, Any]
COLS, ROWS = 100, 40  # terminal size for every app, as rich's width=100
REPORT_FD_ENV = "TUI_BENCH_REPORT_FD"

IMPORTS = {  # label -> import statement
    "prompt_toolkit": "import prompt_toolkit.application",
    "rich": "import rich.console, rich.markdown",
    "prompt_toolkit + rich": "import prompt_toolkit.application, rich.console, rich.markdown",
    "textual": "import textual.app",
}

# Shared by every child: its own RSS from /proc, and a JSON line to the parent on a pipe
# (stdout and stdin are the pty, so they can't carry the report).
_PRELUDE = r"""
import json, os, sys, time

def status_mb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0

def report(**fields):
    os.write(int(os.environ["TUI_BENCH_REPORT_FD"]), (json.dumps(fields) + "\n").encode())
"""

# Inline (full_screen=False) one-line input, as wisp's live region. Input is a pipe nobody
# writes to; output is the real pty. CPR is off because its answer would arrive on the pty,
# not the pipe: prompt_toolkit would wait for it and then print a warning. argv[1] is
# Application's terminal_size_polling_interval ("default": 0.5 s; "none": SIGWINCH only).
_PT_IDLE = _PRELUDE + r"""
import asyncio
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output.vt100 import Vt100_Output

async def main():
    with create_pipe_input() as pipe:
        output = Vt100_Output.from_pty(sys.stdout)
        output.enable_cpr = False
        poll = {} if sys.argv[1] == "default" else {"terminal_size_polling_interval": None}
        app = Application(layout=Layout(Window(BufferControl(Buffer()), height=1)),
                          input=pipe, output=output, full_screen=False, **poll)
        rendered = []
        def first_render(_):
            if not rendered:
                rendered.append(True)
                report(ready=True)
        app.after_render += first_render
        await app.run_async()

asyncio.run(main())
"""

_TX_APP = r"""
import asyncio
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown

class Chat(App):
    AUTO_FOCUS = "Input"  # as a chat would; else the scrollable log takes focus

    def compose(self):
        yield VerticalScroll(id="log")
        yield Input()
"""

# Idle until the parent kills it; pilot.pause() waits for textual's start-up work to end.
_TX_IDLE = _PRELUDE + _TX_APP + rf"""
async def main():
    async with Chat().run_test(size=({COLS}, {ROWS})) as pilot:
        await pilot.pause()
        report(ready=True)
        await asyncio.sleep(3600)

asyncio.run(main())
"""

# Bulk mount_all is the resume-a-session case; one-by-one is a chat appending turns.
# `await mount` returns once each Markdown has parsed and mounted its blocks; pause() then
# lets layout and the compositor run. Its idle detection sleeps, so CPU time is the cleaner
# figure; settled_s is an upper bound.
_TX_MESSAGES = _PRELUDE + _TX_APP + rf"""
async def main(texts, one_by_one):
    app = Chat()
    async with app.run_test(size=({COLS}, {ROWS})) as pilot:
        await pilot.pause()
        log = app.query_one("#log")
        rss0, cpu0, t0 = status_mb("VmRSS"), time.process_time(), time.perf_counter()
        if one_by_one:
            for text in texts:
                await log.mount(Markdown(text))
                log.scroll_end(animate=False)
        else:
            await log.mount_all([Markdown(text) for text in texts])
            log.scroll_end(animate=False)
        mounted = time.perf_counter() - t0
        await pilot.pause()
        report(mount_s=mounted, settled_s=time.perf_counter() - t0,
               cpu_s=time.process_time() - cpu0, rss_before_mb=rss0,
               rss_after_mb=status_mb("VmRSS"), hwm_mb=status_mb("VmHWM"),
               blocks=len(app.query("MarkdownBlock")))

texts = json.load(open(sys.argv[1]))[:int(sys.argv[2])]
asyncio.run(main(texts, sys.argv[3] == "one-by-one"))
"""

# prompt_toolkit is imported too so the RSS is that of the real process shape; rich then
# writes every message to the pty (the scrollback) and forgets it.
_RICH_MESSAGES = _PRELUDE + r"""
import prompt_toolkit.application
from rich.console import Console
from rich.markdown import Markdown

texts = json.load(open(sys.argv[1]))
console = Console(file=sys.stdout, force_terminal=True, width=int(sys.argv[2]))
rss0, cpu0, t0 = status_mb("VmRSS"), time.process_time(), time.perf_counter()
for text in texts:
    console.print(Markdown(text))
sys.stdout.flush()
elapsed = time.perf_counter() - t0
report(mount_s=elapsed, settled_s=elapsed, cpu_s=time.process_time() - cpu0,
       rss_before_mb=rss0, rss_after_mb=status_mb("VmRSS"), hwm_mb=status_mb("VmHWM"))
"""


class BenchError(RuntimeError):
    """A child did not report as its program promises (crash, hang)."""


@dataclass
class Row:
    """One table row: a metric of one library, with every sample."""

    section: str
    subject: str
    metric: str
    unit: str
    samples: list[float] = field(default_factory=list)


@dataclass
class Results:
    rows: dict[tuple[str, str, str], Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, section: str, subject: str, metric: str, unit: str, value: float) -> None:
        key = (section, subject, metric)
        self.rows.setdefault(key, Row(section, subject, metric, unit)).samples.append(value)


# ---- messages -------------------------------------------------------------------------


def messages(n: int) -> list[str]:
    """Deterministic short turns: a paragraph with inline markup and a small code fence."""
    return [
        f"Turn **{i}**: a short paragraph with `inline code`, *emphasis* and a "
        f"[link](https://example.com/{i}). The function below adds two numbers.\n\n"
        "```python\n"
        f"def add_{i}(a: int, b: int) -> int:\n"
        "    # sum two numbers, plus the turn number\n"
        f"    return a + b + {i}\n"
        "```\n"
        for i in range(n)
    ]


# ---- import time ----------------------------------------------------------------------


def _timed(code: str) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of `python -c code`. CPU comes from the
    kernel's rusage of reaped children, so load from other processes barely moves it."""
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - usage0.ru_utime - usage0.ru_stime
    return wall, cpu


_IMPORTTIME = re.compile(r"^import time:\s*(\d+) \|\s*(\d+) \| ( *)(\S+)")


def _importtime_ms(statement: str) -> float:
    """Sum of `-X importtime` cumulative times of the top-level entries the statement
    caused: modules at indent 0 whose root package the statement names."""
    roots = {name.split(".")[0] for name in re.findall(r"[\w.]+", statement)} - {"import"}
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], check=True,
                         capture_output=True, text=True).stderr
    total_us = 0
    for line in err.splitlines():
        m = _IMPORTTIME.match(line)
        if m and not m.group(3) and m.group(4).split(".")[0] in roots:
            total_us += int(m.group(2))
    return total_us / 1000


def measure_imports(res: Results, labels: list[str], repeat: int) -> None:
    for label in labels:  # warm-up: .pyc files and the page cache
        _timed(IMPORTS[label])
    for i in range(repeat):
        log(f"imports: round {i + 1}/{repeat}")
        # Interleaved rounds, so drift from other load hits every library alike.
        wall0, cpu0 = _timed("pass")
        res.add("import", "python -c pass", "wall (baseline)", "ms", wall0 * 1000)
        res.add("import", "python -c pass", "CPU (baseline)", "ms", cpu0 * 1000)
        for label in labels:
            wall, cpu = _timed(IMPORTS[label])
            res.add("import", label, "wall − baseline", "ms", (wall - wall0) * 1000)
            res.add("import", label, "CPU − baseline", "ms", (cpu - cpu0) * 1000)
            res.add("import", label, "-X importtime cumulative", "ms",
                    _importtime_ms(IMPORTS[label]))


# ---- children on a pty ----------------------------------------------------------------


def _drain(master: int) -> None:
    """Read and drop what the child writes to its terminal, as a terminal would."""
    with contextlib.suppress(OSError):  # EIO once the child's end is closed
        while os.read(master, 65536):
            pass


@dataclass
class Child:
    proc: subprocess.Popen[bytes]
    report_fd: int
    stderr: IO[bytes]
    _buffer: bytes = b""

    def report(self, timeout: float) -> JSON:
        """The child's next JSON line; BenchError if it dies or is silent too long."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.report_fd], [], [], max(left, 0))
            chunk = os.read(self.report_fd, 4096) if ready else b""
            if not chunk:
                self.stderr.seek(0)
                tail = self.stderr.read().decode(errors="replace")[-800:]
                raise BenchError(f"no report (exit {self.proc.poll()}): {tail}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        result: JSON = json.loads(line)
        return result


@contextlib.contextmanager
def spawn(program: str, *args: str) -> Iterator[Child]:
    """Run a program with a pty of COLS×ROWS as stdin/stdout (drained by a thread) and a
    pipe for its reports; kill it on the way out."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    read_end, write_end = os.pipe()
    env = {**os.environ, REPORT_FD_ENV: str(write_end), "TERM": "xterm-256color"}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-c", program, *args], stdin=slave,
                                stdout=slave, stderr=err, pass_fds=(write_end,), env=env)
        os.close(slave)
        os.close(write_end)
        drainer = threading.Thread(target=_drain, args=(master,), daemon=True)
        drainer.start()
        try:
            yield Child(proc, read_end, err)
        finally:
            _stop(proc)
            drainer.join(timeout=5)
            os.close(master)
            os.close(read_end)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---- /proc readings of a live child ---------------------------------------------------


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise BenchError(f"no VmRSS for {pid}")


def _cpu_s(pid: int) -> float:
    """utime + stime of the whole process (all threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _switches(pid: int) -> int:
    """Context switches over every thread: each is a wake-up (or a preemption)."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(OSError):  # a thread may end while we read
            for line in status.read_text().splitlines():
                if "ctxt_switches:" in line:  # voluntary and nonvoluntary
                    total += int(line.split()[1])
    return total


# ---- idle -----------------------------------------------------------------------------


def measure_idle(res: Results, apps: dict[str, list[str]], repeat: int,
                 window: float) -> None:
    """Each round runs every app side by side: idle, they hardly compete for the CPU, and
    sharing the window keeps this phase short. Start-up happens before the window."""
    for i in range(repeat):
        log(f"idle: round {i + 1}/{repeat}")
        with contextlib.ExitStack() as stack:
            pids = {}
            for subject, program in apps.items():
                child = stack.enter_context(spawn(*program))
                child.report(timeout=60)
                pids[subject] = child.proc.pid
            time.sleep(0.5)  # let deferred start-up work (timers, GC) finish
            _idle_window(res, pids, window)


def _idle_window(res: Results, pids: dict[str, int], window: float) -> None:
    before = {s: (_rss_mb(pid), _cpu_s(pid), _switches(pid)) for s, pid in pids.items()}
    time.sleep(window)
    for subject, pid in pids.items():
        rss, cpu0, sw0 = before[subject]
        res.add("idle", subject, "RSS once idle", "MB", rss)
        res.add("idle", subject, f"CPU over {window:g} s idle", "ms",
                (_cpu_s(pid) - cpu0) * 1000)
        res.add("idle", subject, "wake-ups (context switches) / s", "/s",
                (_switches(pid) - sw0) / window)


# ---- 1,000 messages -------------------------------------------------------------------


def measure_messages(res: Results, subject: str, program: str, args: list[str],
                     repeat: int) -> None:
    for i in range(repeat):
        log(f"messages {subject}: run {i + 1}/{repeat}")
        with spawn(program, *args) as child:
            r = child.report(timeout=900)
        section = "messages"
        res.add(section, subject, "wall time", "s", r["mount_s"])
        if r["settled_s"] != r["mount_s"]:
            res.add(section, subject, "wall time incl. settle", "s", r["settled_s"])
        res.add(section, subject, "CPU time", "s", r["cpu_s"])
        res.add(section, subject, "RSS before", "MB", r["rss_before_mb"])
        res.add(section, subject, "RSS after", "MB", r["rss_after_mb"])
        res.add(section, subject, "RSS growth", "MB", r["rss_after_mb"] - r["rss_before_mb"])
        res.add(section, subject, "peak RSS (VmHWM)", "MB", r["hwm_mb"])
        if "blocks" in r:  # sanity: every message's paragraph and fence became widgets
            res.add(section, subject, "MarkdownBlock widgets", "", r["blocks"])


# ---- report ---------------------------------------------------------------------------


def _fmt(value: float, unit: str) -> str:
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return f"{value:.{digits}f} {unit}"


def table(res: Results) -> list[str]:
    lines = ["| measure | library | metric | median | min | n |", "|---|---|---|---|---|---|"]
    for row in res.rows.values():
        med, low = statistics.median(row.samples), min(row.samples)
        lines.append(f"| {row.section} | {row.subject} | {row.metric} | "
                     f"{_fmt(med, row.unit)} | {_fmt(low, row.unit)} | {len(row.samples)} |")
    return lines


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def meta(args: argparse.Namespace, n_messages: int) -> JSON:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join([".venv/bin/python", "bench/tui_libs.py", *sys.argv[1:]]),
        "wisp_commit": git_head(),
        "repeat": args.repeat,
        "heavy_repeat": args.heavy_repeat,
        "idle_window_s": args.idle_window,
        "messages": n_messages,
        "terminal": f"{COLS}x{ROWS}",
        "cpus": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {d: _version(d) for d in ("prompt_toolkit", "rich", "textual")},
    }


def render(res: Results, info: JSON) -> list[str]:
    v = info["versions"]
    head = (f"TUI libraries, wisp {info['wisp_commit']}: prompt_toolkit {v['prompt_toolkit']}, "
            f"rich {v['rich']}, textual {v['textual'] or 'absent'}; python {info['python']}, "
            f"{info['cpus']} CPUs, load {info['loadavg_end'][0]:.2f}; "
            f"n = fresh interpreters per row")
    lines = [head, "", *table(res)]
    if res.notes:
        lines += ["", "Notes:", *(f"- {note}" for note in res.notes)]
    return lines


def save(res: Results, info: JSON, lines: list[str], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    (out / f"tui_libs-{stamp}.md").write_text("\n".join(lines) + "\n")
    raw = {"meta": info, "notes": res.notes, "rows": [asdict(r) for r in res.rows.values()]}
    path = out / f"tui_libs-{stamp}.json"
    path.write_text(json.dumps(raw, indent=2) + "\n")
    return path


# ---- main -----------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=5, help="fresh interpreters per measure")
    p.add_argument("--heavy-repeat", type=int, default=1,
                   help="runs of the textual 1,000-message scenario (~35 s each)")
    p.add_argument("--messages", type=int, default=1000, help="messages in scenario 3")
    p.add_argument("--idle-window", type=float, default=3.0, help="seconds of idle CPU")
    p.add_argument("--incremental", type=int, default=0, metavar="N",
                   help="also mount N messages one at a time in textual (0: skip)")
    p.add_argument("--out", type=Path, default=BENCH / "results", help="where results go")
    return p.parse_args()


def run_all(args: argparse.Namespace, res: Results, texts_path: str) -> None:
    has_textual = importlib.util.find_spec("textual") is not None
    if not has_textual:
        res.notes.append("textual is not importable here (it is not a wisp dependency): "
                         "its rows are skipped. `pip install textual` into the venv to add them.")
    labels = [label for label in IMPORTS if has_textual or label != "textual"]
    measure_imports(res, labels, args.repeat)
    # prompt_toolkit polls the terminal size every 0.5 s by default (for threads and
    # Windows, where SIGWINCH is not delivered); wisp can turn that off, so show both.
    idle = {"prompt_toolkit": [_PT_IDLE, "default"],
            "prompt_toolkit, size polling off": [_PT_IDLE, "none"]}
    if has_textual:
        idle["textual"] = [_TX_IDLE]
    measure_idle(res, idle, args.repeat, args.idle_window)
    n = str(args.messages)
    measure_messages(res, f"rich Markdown → pty × {n}", _RICH_MESSAGES, [texts_path, str(COLS)],
                     args.repeat)
    if has_textual:
        measure_messages(res, f"textual Markdown widgets, mount_all × {n}", _TX_MESSAGES,
                         [texts_path, n, "bulk"], args.heavy_repeat)
    if has_textual and args.incremental:
        k = str(args.incremental)
        measure_messages(res, f"textual Markdown widgets, one by one × {k}", _TX_MESSAGES,
                         [texts_path, k, "one-by-one"], args.heavy_repeat)


def main() -> None:
    args = parse_args()
    res = Results()
    res.notes += [
        "import: `python -c \"import X\"` minus `python -c pass` of the same round; CPU is "
        "user + system from rusage, steadier than wall time on a loaded machine.",
        "idle: prompt_toolkit inline Application, pipe input, Vt100 output on a real pty (CPR "
        "off); textual App with a focused Input under run_test() (headless driver: no "
        "terminal I/O; its cursor blinks every 0.5 s). CPU is read from /proc in clock ticks "
        f"of {1000 // os.sysconf('SC_CLK_TCK')} ms, so 0 means under one tick per window.",
        "messages: the same texts (paragraph + 3-line python fence) for both; rich prints to a "
        "pty in a process that has also imported prompt_toolkit; textual 'incl. settle' adds "
        "pilot.pause(), whose idle detection sleeps: CPU time is the cleaner figure.",
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(messages(args.messages), f)
    try:
        run_all(args, res, f.name)
    finally:
        os.unlink(f.name)
    info = meta(args, args.messages)
    lines = render(res, info)
    print("\n".join(lines))
    log(f"results: {save(res, info, lines, args.out)}")


if __name__ == "__main__":
    main()
