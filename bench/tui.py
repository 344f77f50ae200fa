"""wisp's interactive terminal UI against its targets, and against the reference CLI's UI.

    .venv/bin/python bench/tui.py [--quick] [--launches N] [--keys N] [--turns N]
                                  [--no-reference] [--reference-renderer fullscreen|classic]

Each UI runs on a pseudo-terminal of 100x30 (`benchlib.tui_pty`), which a thread reads
continuously, stamping every read; keys are written to the pty. Nothing polls a screen:
a figure is the time between a write and the read that brought the expected bytes back.
The model is a scripted Messages API server in a process of its own
(`benchlib.tui_serve`). Measured, for wisp and (when .bench-cache has it) the reference
CLI, side by side in the same run because the machine is noisy (phases alternate wisp,
reference):

1. Launch: spawn → the prompt glyph "❯" shows → the terminal is in raw mode → a typed
   "§" is drawn. The clock stops at the read holding the echoed "§"; if it is not drawn
   within 50 ms another marker is typed (a UI may drop keys typed while it starts), and
   so on: the first one drawn counts. N fresh processes each (after one discarded warm-up), with
   a HOME kept across runs as a user's is. Target: ≤ 0.3 s.
2. Keystroke → screen: one letter written, the time until the bytes drawing it arrive.
   Letters are unique within a run of 12 (Greek and Cyrillic, four alphabets in turn),
   then the run is erased with backspaces (not timed), so a full redraw of the input line
   cannot be mistaken for the new letter's echo, and the streamed answer (ASCII) never
   holds one. Spaced ≥ 30 ms. Idle; then while an answer streams (a long Markdown answer,
   400 deltas 20 ms apart; only keys typed inside the server's streaming window count,
   and another answer is asked for until enough were); then after the long session.
   Target: p99 ≤ 16 ms.
3. Memory: VmRSS of the UI's own process (the pty child) idle after start; after a few
   warm-up turns (imports done on the first turn do not count as growth); after the
   session of T prompt/answer turns (2T messages; each prompt is submitted as soon as the
   previous answer is drawn). Growth per 1,000 messages is from the warm-up point to the
   end. Targets: idle ≤ 60 MB; growth ≤ 5 MB per 1,000 messages. Also the time per turn
   (Enter → the answer drawn). A session has a time budget: a slower UI does fewer
   turns, and its growth is scaled to 1,000 messages (the row says how many it did).
4. Idle CPU: utime + stime from /proc/<pid>/stat over 10 s idle, after start and after
   the session (both UIs' windows run at once: they are idle). Also the bytes each UI
   wrote to the terminal meanwhile. Target: about zero.

The reference CLI (.bench-cache/claude-code, see benchlib/clis.py) runs offline against
the same server, with a HOME whose ~/.claude.json is seeded as after onboarding (no
welcome or theme dialogs, the project trusted, the environment's API key approved), so it
starts straight at its input prompt. Its default renderer is a fullscreen one (alternate
screen, redrawing changed cells only); it is pinned with CLAUDE_CODE_NO_FLICKER=1, since
a start the bench cut short would otherwise switch the next one to the classic renderer
(`--reference-renderer classic` measures that one instead). Every UI is asked to exit
with Ctrl+C and then killed with its whole process group.

Prints a Markdown table and writes it, with every sample as JSON, to
bench/results/tui-<UTC time>.{md,json}. `--quick` (about a minute) checks the bench works;
its figures are not a measurement.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import itertools
import json
import math
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import clis
from benchlib.provenance import git_head, log
from benchlib.tui_pty import BenchTimeout, Term
from benchlib.tui_serve import stream_prompt, turn_mark

BENCH = Path(__file__).resolve().parent
SERVER = BENCH / "benchlib" / "tui_serve.py"
ROWS, COLS = 30, 100
API_KEY = "sk-ant-bench-tui-0123456789abcdefghijklmn"
PROMPT_GLYPH = "❯".encode()
# Typed at launch, one every LAUNCH_RETRY s until one is drawn (a UI may drop keys typed
# while it starts); the first drawn stops the clock.
LAUNCH_MARKERS = "§¤¶°±µ¿¡×÷ÆÐÞßæðþøØĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖė"
LAUNCH_RETRY = 0.05
# Four alphabets of one-cell letters; a run of keys uses one, the next run the next.
ALPHABETS = (
    "αβγδεζηθικλμνξοπρστυφχψω",
    "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ",
    "абвгдежзийклмнопрстуфхцчшщъыьэюя",
    "АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ",
)
RUN = 12  # keys typed before the input is erased
ISOLATED_GAP = 0.12  # keys this far apart: longer than any UI's minimum redraw interval
BACKSPACE = b"\x7f"
CTRL_C = b"\x03"
MS = 1e-3
_streams = itertools.count()  # streamed answers asked for, over the whole run


@dataclass
class Plan:
    launches: int  # fresh processes per UI, after one discarded warm-up
    keys: int  # keystrokes per latency measurement
    key_gap: float  # seconds between keystrokes, at least
    turns: int  # prompt/answer turns of the long session
    warm_turns: int  # turns before the "warm" RSS point
    session_budget: float  # seconds a UI may spend on the turns
    idle: float  # seconds of an idle-CPU window
    isolated_keys: int  # keystrokes ISOLATED_GAP apart


def _plan(args: argparse.Namespace) -> Plan:
    if args.quick:
        plan = Plan(launches=3, keys=50, key_gap=0.03, turns=40, warm_turns=5,
                    session_budget=15, idle=3, isolated_keys=12)
    else:
        plan = Plan(launches=10, keys=200, key_gap=0.03, turns=500, warm_turns=10,
                    session_budget=80, idle=10, isolated_keys=40)
    for name in ("launches", "keys", "turns"):
        if getattr(args, name) is not None:
            setattr(plan, name, getattr(args, name))
    return plan


# The UIs ---------------------------------------------------------------------------------


@dataclass
class Ui:
    name: str
    argv: list[str]
    env: dict[str, str]
    home: Path
    cwd: Path
    prepare: Callable[[], None] = lambda: None
    exit_keys: tuple[bytes, ...] = (CTRL_C, CTRL_C, CTRL_C)

    def spawn(self) -> Term:
        self.prepare()
        return Term.spawn(self.argv, self.env, self.cwd, ROWS, COLS)


def _base_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_MAX_RETRIES": "1",
        **clis.OFFLINE_ENV,
    }


def wisp_ui(work: Path, base_url: str) -> Ui:
    home, cwd = _dirs(work, "wisp")
    env = {**_base_env(home, base_url), "WISP_CONFIG_DIR": str(home / ".wisp"),
           # wisp's bytecode from the bench cache, as a pip-installed wheel has it
           "PYTHONPYCACHEPREFIX": str(clis.PYC_WARM)}
    return Ui("wisp", [str(clis.WISP_BIN)], env, home, cwd,
              prepare=lambda: trust_wisp_project(cwd, env))


def trust_wisp_project(cwd: Path, env: dict[str, str]) -> None:
    """The project trusted, as a user's is after its first start: the bench measures
    the daily start, not the one-time trust dialog."""
    from wisp.settings.trust import record

    record(cwd, env, hasTrustDialogAccepted=True)


def reference_ui(work: Path, base_url: str, path: Path, renderer: str) -> Ui:
    home, cwd = _dirs(work, "reference")
    env = _base_env(home, base_url)
    if renderer == "classic":
        env["CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN"] = "1"
    else:
        env["CLAUDE_CODE_NO_FLICKER"] = "1"  # pinned: a killed start would switch it off
    return Ui("reference", [str(path)], env, home, cwd,
              prepare=lambda: seed_reference_config(home, cwd))


def seed_reference_config(home: Path, cwd: Path) -> None:
    """~/.claude.json as after onboarding: no welcome and theme dialogs, the folder
    trusted, the environment's API key approved (the CLI asks about a key it has not seen,
    naming its last 20 characters). Also forgets its fullscreen-renderer start-up record:
    a run the bench killed would otherwise make the next one fall back and say so."""
    path = home / ".claude.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data["hasCompletedOnboarding"] = True
    responses = data.setdefault("customApiKeyResponses", {"approved": [], "rejected": []})
    if API_KEY[-20:] not in responses.setdefault("approved", []):
        responses["approved"].append(API_KEY[-20:])
    project = data.setdefault("projects", {}).setdefault(str(cwd), {})
    project["hasTrustDialogAccepted"] = True
    for key in ("fullscreenBootPending", "fullscreenBootStrikes", "fullscreenAutoDisabled"):
        data.pop(key, None)
    path.write_text(json.dumps(data, indent=2))


def _dirs(work: Path, name: str) -> tuple[Path, Path]:
    home, cwd = work / name / "home", work / name / "project"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    return home, cwd.resolve()


# The server ------------------------------------------------------------------------------


class Server:
    """benchlib/tui_serve.py in its own process; its stream announcements on a queue."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.close()
            raise SystemExit(f"bench server did not start (said {self.url!r})")
        self.streams: queue.Queue[tuple[float, float]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            kind, *values = line.split()
            if kind == "stream":
                self.streams.put((float(values[0]), float(values[1])))

    def next_stream(self, timeout: float) -> tuple[float, float]:
        """(start, seconds) of the next streamed answer, in the perf_counter timeline."""
        return self.streams.get(timeout=timeout)

    def close(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# Measurements ----------------------------------------------------------------------------


@dataclass
class Launch:
    first_output: float
    prompt: float
    raw_mode: float
    echo: float
    markers_typed: int
    exit_status: int | None


def launch_ready(term: Term, timeout: float = 60) -> Launch:
    """From spawn to a typed character drawn (see the module docstring, 1)."""
    _, t_prompt = term.wait_for(PROMPT_GLYPH, 0, timeout)
    deadline = time.perf_counter() + timeout
    while not term.raw_mode():
        if time.perf_counter() > deadline:
            raise BenchTimeout("the UI never put the terminal in raw mode")
        time.sleep(0.0005)
    t_raw = time.perf_counter()
    start = term.size
    needles = [m.encode() for m in LAUNCH_MARKERS]
    for typed in range(1, len(needles) + 1):
        term.write(needles[typed - 1])
        try:
            last = typed == len(needles)
            _, _, t_echo = term.wait_any(needles[:typed], start,
                                         timeout if last else LAUNCH_RETRY)
            break
        except BenchTimeout:
            if last:
                raise
    term.write(BACKSPACE * typed)  # the input as it was
    return Launch(term.time_at(0) - term.t0, t_prompt - term.t0, t_raw - term.t0,
                  t_echo - term.t0, typed, None)


def type_keys(term: Term, n: int, gap: float, until: float = math.inf) -> list[float]:
    """Keystroke → drawn latencies (seconds) of up to `n` keys, typed while
    perf_counter() < `until`; leaves the input empty."""
    latencies: list[float] = []
    in_run, run, last = 0, 0, 0.0
    while len(latencies) < n:
        wait = last + gap - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        if time.perf_counter() >= until:
            break
        letter = ALPHABETS[run % len(ALPHABETS)][in_run].encode()
        start = term.size
        last = term.write(letter)
        _, seen = term.wait_for(letter, start, 10)
        latencies.append(seen - last)
        in_run += 1
        if in_run == RUN:
            time.sleep(gap)
            term.write(BACKSPACE * in_run)
            in_run, run = 0, run + 1
            last = time.perf_counter() + gap  # let the erase be drawn before timing again
    if in_run:
        time.sleep(gap)
        term.write(BACKSPACE * in_run)
    return latencies


def submit(term: Term, text: str) -> float:
    """Types `text`, then Enter in a write of its own (a UI may take a burst holding a
    newline for a paste); returns when Enter was written."""
    term.write(text)
    time.sleep(0.01)
    return term.write(b"\r")


def keys_while_streaming(term: Term, server: Server, n: int, gap: float
                         ) -> tuple[list[float], dict[str, Any]]:
    """Keystroke latencies of keys typed while the server streams a long answer."""
    latencies: list[float] = []
    info: dict[str, Any] = {"answers": 0, "stream_kb_per_s": []}
    while len(latencies) < n and info["answers"] < 6:
        with contextlib.suppress(queue.Empty):
            while True:
                server.streams.get_nowait()  # stale announcements
        prompt, first, last = stream_prompt(next(_streams))
        offset = term.size
        submit(term, prompt)
        start, seconds = server.next_stream(30)
        info["answers"] += 1
        term.wait_for(first.encode(), offset, 30)  # the UI shows the stream
        end = start + seconds
        latencies += type_keys(term, n - len(latencies), gap, until=end - 0.1)
        term.wait_for(last.encode(), offset, seconds + 30)
        info["stream_kb_per_s"].append(term.bytes_between(start, end) / 1024 / seconds)
        term.quiet(0.5, 10)
    return latencies, info


def run_turns(term: Term, first: int, count: int, deadline: float) -> list[float]:
    """Prompt/answer turns, each submitted as soon as the previous answer is drawn:
    Enter → the answer drawn, per turn."""
    times = []
    for i in range(first, first + count):
        if time.perf_counter() > deadline:
            break
        offset = term.size
        t_enter = submit(term, f"Q{i:05d} hi")
        _, seen = term.wait_for(turn_mark(i).encode(), offset, 60)
        times.append(seen - t_enter)
    return times


def idle_windows(terms: dict[str, Term], seconds: float) -> dict[str, dict[str, float]]:
    """CPU seconds and bytes written over the same idle window, for every UI at once."""
    for term in terms.values():
        term.quiet(1.0, 10)
    before = {name: (term.cpu_s(), time.perf_counter()) for name, term in terms.items()}
    time.sleep(seconds)
    out = {}
    for name, term in terms.items():
        cpu0, t0 = before[name]
        t1 = time.perf_counter()
        out[name] = {"cpu_s": term.cpu_s() - cpu0, "seconds": t1 - t0,
                     "bytes": term.bytes_between(t0, t1)}
    return out


# The run ---------------------------------------------------------------------------------


@dataclass
class Results:
    launches: dict[str, list[Launch]] = field(default_factory=dict)
    keys: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # phase → ui → s
    stream: dict[str, dict[str, Any]] = field(default_factory=dict)
    rss: dict[str, dict[str, float]] = field(default_factory=dict)  # ui → point → MB
    turns: dict[str, dict[str, Any]] = field(default_factory=dict)
    idle: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # phase → ui
    notes: list[str] = field(default_factory=list)


FAILURES = (BenchTimeout, OSError, queue.Empty)


def _guard(res: Results, name: str, what: str, fn: Callable[[], None]) -> bool:
    """Runs one UI's step; a failure becomes a note instead of ending the bench."""
    try:
        fn()
        return True
    except FAILURES as exc:
        message = f"{name}: {what} failed: {type(exc).__name__}: {exc}"[:500]
        log(message)
        res.notes.append(message)
        return False


def run_launches(uis: list[Ui], plan: Plan, res: Results) -> None:
    for ui in uis:
        res.launches[ui.name] = []
    for rep in range(-1, plan.launches):  # rep -1: the warm-up, discarded
        for ui in (uis if rep % 2 == 0 else uis[::-1]):  # ABBA
            log(f"launch {ui.name}: " + ("warm-up" if rep < 0 else f"{rep + 1}/{plan.launches}"))
            _guard(res, ui.name, f"launch {rep + 1}", lambda ui=ui, rep=rep: _launch(ui, rep, res))


def _launch(ui: Ui, rep: int, res: Results) -> None:
    term = ui.spawn()
    try:
        launch = launch_ready(term)
        term.quiet(0.3, 3)
    finally:
        status = term.close(ui.exit_keys)
    if rep >= 0:
        res.launches[ui.name].append(dataclasses.replace(launch, exit_status=status))


class Live:
    """The UIs of the long session still running; a UI whose step fails leaves it."""

    def __init__(self, res: Results) -> None:
        self.res = res
        self.terms: dict[str, Term] = {}
        self.uis: dict[str, Ui] = {}

    def each(self, what: str, fn: Callable[[str, Term], None]) -> None:
        for name, term in list(self.terms.items()):
            if not _guard(self.res, name, what, lambda n=name, t=term: fn(n, t)):
                self.drop(name)

    def drop(self, name: str) -> None:
        self.terms.pop(name).close(self.uis[name].exit_keys)

    def close(self) -> None:
        for name in list(self.terms):
            self.drop(name)


def run_sessions(uis: list[Ui], server: Server, plan: Plan, res: Results) -> None:
    live = Live(res)
    try:
        for ui in uis:
            log(f"session {ui.name}: start")
            live.uis[ui.name] = ui
            live.terms[ui.name] = ui.spawn()

        def start(name: str, term: Term) -> None:
            launch_ready(term)
            term.quiet(1.0, 10)
            res.rss[name] = {"idle_start": term.rss_mb()}

        live.each("start", start)
        log(f"idle CPU after start: {plan.idle:g} s")
        res.idle["start"] = idle_windows(live.terms, plan.idle)
        _keys_phase(live, "idle", plan.keys, plan.key_gap)
        _keys_phase(live, "isolated", plan.isolated_keys, ISOLATED_GAP)

        def streaming(name: str, term: Term) -> None:
            log(f"keys while streaming: {name}")
            lat, info = keys_while_streaming(term, server, plan.keys, plan.key_gap)
            res.keys.setdefault("stream", {})[name] = lat
            res.stream[name] = info

        live.each("keys while streaming", streaming)
        live.each("the long session", lambda name, term: _session(name, term, plan, res))
        log(f"idle CPU after the session: {plan.idle:g} s")
        res.idle["after"] = idle_windows(live.terms, plan.idle)

        def memory(name: str, term: Term) -> None:
            res.rss[name]["after_idle"] = term.rss_mb()
            res.rss[name]["hwm"] = term.hwm_mb()

        live.each("memory", memory)
        _keys_phase(live, "after", plan.keys, plan.key_gap)
    finally:
        live.close()


def _keys_phase(live: Live, phase: str, n: int, gap: float) -> None:
    def keys(name: str, term: Term) -> None:
        log(f"keys {phase}: {name}, {n} keys {gap * 1000:.0f} ms apart")
        term.quiet(0.5, 10)
        live.res.keys.setdefault(phase, {})[name] = type_keys(term, n, gap)

    live.each(f"keys {phase}", keys)


def _session(name: str, term: Term, plan: Plan, res: Results) -> None:
    log(f"session {name}: {plan.turns} turns (budget {plan.session_budget:g} s)")
    deadline = time.perf_counter() + plan.session_budget
    warm = run_turns(term, 1, plan.warm_turns, math.inf)
    term.quiet(0.5, 10)
    res.rss[name]["warm"] = term.rss_mb()
    rest = run_turns(term, 1 + plan.warm_turns, plan.turns - plan.warm_turns, deadline)
    term.quiet(1.0, 10)
    res.rss[name]["end"] = term.rss_mb()
    done = len(warm) + len(rest)
    res.turns[name] = {"done": done, "warm": len(warm), "times": warm + rest,
                       "threads": term.threads()}
    if done < plan.turns:
        res.notes.append(f"{name}: {done} of {plan.turns} turns within the "
                         f"{plan.session_budget:g} s budget; growth scaled to 1,000 messages")


# Report ----------------------------------------------------------------------------------


@dataclass
class Row:
    what: str
    unit: str  # "s", "MB", "ms/10s", "B", "count"
    wisp: float | None
    reference: float | None = None
    target: float | None = None
    target_shown: str = ""
    shown: dict[str, str] = field(default_factory=dict)  # ui → text overriding the value

    @property
    def ratio(self) -> float | None:
        if self.wisp is None or not self.reference:
            return None
        return self.wisp / self.reference

    @property
    def met(self) -> str:
        if self.target is None or self.wisp is None:
            return "—"
        return "met" if self.wisp <= self.target else "MISSED"


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def rows_of(res: Results, plan: Plan, names: list[str]) -> list[Row]:
    def per(fn: Callable[[str], float | None]) -> tuple[float | None, float | None]:
        def safe(name: str) -> float | None:
            try:
                return fn(name) if name in names else None
            except (KeyError, ValueError, ZeroDivisionError, statistics.StatisticsError):
                return None
        return safe("wisp"), safe("reference")

    rows: list[Row] = []
    n = plan.launches
    rows.append(Row(f"launch → typed char drawn, median of {n}", "s",
                    *per(lambda u: statistics.median(x.echo for x in res.launches[u])),
                    target=0.3, target_shown="≤ 300 ms"))
    rows.append(Row("… min", "s", *per(lambda u: min(x.echo for x in res.launches[u]))))
    rows.append(Row("… launch → prompt glyph shown, median", "s",
                    *per(lambda u: statistics.median(x.prompt for x in res.launches[u]))))
    rows.append(Row("… launch → first output, median", "s",
                    *per(lambda u: statistics.median(x.first_output
                                                     for x in res.launches[u]))))
    phases = (("idle", "idle"), ("isolated", f"idle, {ISOLATED_GAP * 1000:.0f} ms apart"),
              ("stream", "while an answer streams"),
              ("after", f"after {2 * plan.turns:,} messages"))
    for phase, label in phases:
        keys = res.keys.get(phase, {})
        count = len(keys.get("wisp", []))
        for q, tag in ((50, "p50"), (99, "p99"), (100, "max")):
            rows.append(Row(f"keystroke → drawn, {label}: {tag} (n={count})"
                            if q == 50 else f"… {tag}", "s",
                            *per(lambda u, q=q, keys=keys: _pct(keys[u], q)),
                            target=0.016 if q == 99 else None,
                            target_shown="≤ 16 ms" if q == 99 else ""))
    rows.append(Row("… output while streaming (KB/s)", "count",
                    *per(lambda u: statistics.median(res.stream[u]["stream_kb_per_s"]))))
    rows.append(Row("RSS idle after start", "MB", *per(lambda u: res.rss[u]["idle_start"]),
                    target=60, target_shown="≤ 60 MB"))
    warm = plan.warm_turns
    rows.append(Row(f"RSS after {warm} warm-up turns", "MB", *per(lambda u: res.rss[u]["warm"])))
    done = {u: res.turns.get(u, {}).get("done", 0) for u in names}
    rows.append(Row("RSS after the session", "MB", *per(lambda u: res.rss[u]["end"]),
                    shown={u: f"{res.rss[u]['end']:.1f} MB ({2 * done[u]:,} msgs)"
                           for u in names if "end" in res.rss.get(u, {})}))

    def growth(u: str) -> float:
        msgs = 2 * (done[u] - res.turns[u]["warm"])
        return (res.rss[u]["end"] - res.rss[u]["warm"]) / msgs * 1000

    rows.append(Row("RSS growth per 1,000 messages (after warm-up)", "MB", *per(growth),
                    target=5, target_shown="≤ 5 MB"))
    rows.append(Row("peak RSS (VmHWM) of the session", "MB", *per(lambda u: res.rss[u]["hwm"])))
    rows.append(Row("time per turn (Enter → answer drawn), median", "s",
                    *per(lambda u: statistics.median(res.turns[u]["times"]))))
    rows.append(Row("… p90", "s", *per(lambda u: _pct(res.turns[u]["times"], 90))))
    rows.append(Row("… last 10% of the session, median", "s", *per(
        lambda u: statistics.median(res.turns[u]["times"][-max(1, done[u] // 10):]))))
    for phase, label in (("start", "after start"), ("after", "after the session")):
        idle = res.idle.get(phase, {})
        rows.append(Row(f"idle CPU {label} (per 10 s)", "ms/10s", *per(
            lambda u, idle=idle: idle[u]["cpu_s"] / idle[u]["seconds"] * 10),
            target=0.01, target_shown="≈ 0 (≤ 10 ms)"))
        rows.append(Row("… bytes written to the terminal meanwhile", "B", *per(
            lambda u, idle=idle: idle[u]["bytes"])))
    return rows


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        return f"{value / MS:.1f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "ms/10s":
        return f"{value / MS:.0f} ms"
    if unit == "B":
        return f"{value:,.0f} B"
    return f"{value:,.1f}"


def render(rows: list[Row], meta: dict[str, Any], notes: list[str]) -> list[str]:
    load = meta["loadavg_end"]
    ref = meta["reference"] or "absent"
    lines = [
        f"wisp TUI {meta['wisp']} ({meta['wisp_commit']}) vs reference {ref}"
        + (f" ({meta['reference_renderer']} renderer)" if meta["reference"] else "")
        + f"; pty {COLS}x{ROWS}; {meta['cpus']} CPUs, load {load[0]:.2f}; "
          f"python {meta['python']}" + ("; --quick: not a measurement" if meta["quick"]
                                        else ""),
        "",
        "| what | wisp | reference | wisp/ref | target | met? |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [row.what,
                 row.shown.get("wisp") or _fmt(row.wisp, row.unit),
                 row.shown.get("reference") or (_fmt(row.reference, row.unit)
                                                if meta["reference"] else "absent"),
                 f"{row.ratio:.2f}" if row.ratio is not None else "—",
                 row.target_shown or "—", row.met]
        lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Notes:", *(f"- {n}" for n in notes)]
    return lines


# Main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    plan = _plan(args)
    reference = None if args.no_reference else clis.find_reference(args.reference)
    if reference is None and not args.no_reference:
        log("reference CLI not found: wisp alone (bench/run.py --install-reference)")
    clis.prepare_bytecode()
    res = Results()
    load_start = os.getloadavg()
    with _workdir(args.keep) as work:
        server = Server()
        try:
            uis = [wisp_ui(work, server.url)]
            if reference is not None:
                uis.append(reference_ui(work, server.url, reference, args.reference_renderer))
            run_launches(uis, plan, res)
            run_sessions(uis, server, plan, res)
        finally:
            server.close()
    names = [ui.name for ui in uis]
    meta = _meta(args, plan, reference, load_start)
    rows = rows_of(res, plan, names)
    lines = render(rows, meta, res.notes)
    print("\n".join(lines))
    _save(args.out, meta, rows, res, lines)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="about a minute: checks the bench runs")
    p.add_argument("--launches", type=int, help="fresh processes per UI (default 10)")
    p.add_argument("--keys", type=int, help="keystrokes per latency figure (default 200)")
    p.add_argument("--turns", type=int, help="turns of the long session (default 500)")
    p.add_argument("--reference", metavar="PATH", help="the reference CLI binary "
                   f"(default {clis.REFERENCE_BIN.relative_to(clis.ROOT)})")
    p.add_argument("--no-reference", action="store_true", help="wisp alone")
    p.add_argument("--reference-renderer", choices=("fullscreen", "classic"),
                   default="fullscreen", help="the reference's renderer: its default "
                   "fullscreen one (alternate screen), or the classic inline one")
    p.add_argument("--out", type=Path, default=BENCH / "results", help="where results go")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    return p.parse_args(argv)


@contextlib.contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="wisp-tui-bench-"))
    try:
        yield work
    finally:
        if keep:
            log(f"scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _meta(args: argparse.Namespace, plan: Plan, reference: Path | None,
          load_start: tuple[float, float, float]) -> dict[str, Any]:
    from wisp import __version__

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join([".venv/bin/python", "bench/tui.py", *sys.argv[1:]]),
        "quick": args.quick,
        "plan": asdict(plan),
        "pty": {"cols": COLS, "rows": ROWS, "TERM": "xterm-256color"},
        "cpus": os.cpu_count(),
        "loadavg_start": load_start,
        "loadavg_end": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "wisp": __version__,
        "wisp_commit": git_head(),
        "reference": clis.reference_version(reference) if reference else None,
        "reference_renderer": args.reference_renderer if reference else None,
    }


def _save(out: Path, meta: dict[str, Any], rows: list[Row], res: Results,
          lines: list[str]) -> None:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "meta": meta,
        "rows": [{**asdict(r), "ratio": r.ratio, "met": r.met} for r in rows],
        "samples": {
            "launches": {u: [asdict(x) for x in v] for u, v in res.launches.items()},
            "keys": res.keys, "stream": res.stream, "rss": res.rss, "turns": res.turns,
            "idle": res.idle,
        },
        "notes": res.notes,
    }
    (out / f"tui-{stamp}.json").write_text(json.dumps(payload, indent=1) + "\n")
    (out / f"tui-{stamp}.md").write_text("\n".join(lines) + "\n")
    log(f"results: {out / f'tui-{stamp}.md'} and .json")


if __name__ == "__main__":
    raise SystemExit(main())
