"""The scenarios of issue 6, each one run of one CLI.

Every run checks the frames it times (a fast wrong answer must not look like a win) and
raises BenchError when they are wrong.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from benchlib import sdk
from benchlib.clis import REFERENCE, WISP, WISP_SRC, Cli
from benchlib.model import Ctx, Metric, RunResult, Scenario
from benchlib.proc import BenchError, Child, Line, spawn
from benchlib.router import BIGOUT, TOOL_CALLS, TOOLS50

STREAM = ("--output-format", "stream-json", "--verbose")
DUPLEX = ("--input-format", "stream-json", *STREAM)
BYPASS = ("--permission-mode", "bypassPermissions")
ALL = frozenset({WISP, WISP_SRC, REFERENCE})
DUPLEX_TURNS = 20
IDLE_BEFORE_FIRST_PROMPT = 1.0  # seconds, in the duplex-idle scenario


def _result(child: Child, timeout: float = 120.0) -> Line:
    line = child.wait_for(lambda ln: ln.kind == "result", timeout)
    assert line.frame is not None
    if line.frame.get("is_error"):
        raise BenchError(f"error result: {str(line.frame)[:400]}")
    return line


# --- --version -----------------------------------------------------------------------------


def run_version(cli: Cli, ctx: Ctx) -> RunResult:
    child = spawn([str(cli.path), "--version"], cli.env(ctx.base_url), ctx.work)
    out = child.drain()
    done = child.finish()
    if done.returncode != 0 or not out:
        raise BenchError(f"--version failed: rc {done.returncode}, {child.stderr_tail()}")
    return RunResult({"wall": done.t, "rss": done.maxrss_mb, "cpu": done.cpu})


# --- -p "hi" stream-json ------------------------------------------------------------------


def run_print(cli: Cli, ctx: Ctx) -> RunResult:
    child = spawn([str(cli.path), "-p", "hi", *STREAM], cli.env(ctx.base_url), ctx.work)
    first = child.next_line(60)
    if first is None or first.kind != "system/init":
        raise BenchError(f"first frame is not system/init: {first}; {child.stderr_tail()}")
    assistant = child.wait_for(lambda ln: ln.kind == "assistant")
    result = _result(child)
    done = child.finish()
    return RunResult({
        "first": first.t,
        "assistant": assistant.t,
        "result": result.t,
        "exit": done.t,
        "rss": done.maxrss_mb,
        "cpu": done.cpu,
    })


# --- duplex ---------------------------------------------------------------------------------


def _initialize(child: Child) -> tuple[float, float]:
    """Send initialize; (when it was written, when its control_response arrived)."""
    sent = child.send({
        "type": "control_request",
        "request_id": "req_1_bench",
        "request": {"subtype": "initialize", "hooks": None},
    })
    answer = child.wait_for(
        lambda ln: ln.kind == "control_response"
        and (ln.frame or {}).get("response", {}).get("request_id") == "req_1_bench"
    )
    assert answer.frame is not None
    if answer.frame["response"].get("subtype") != "success":
        raise BenchError(f"initialize failed: {answer.frame}")
    return sent, answer.t


def _turn(child: Child, text: str) -> float:
    """One user prompt; seconds from writing it to its result frame."""
    sent = child.send({
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    })
    return _result(child).t - sent


def run_initialize(cli: Cli, ctx: Ctx) -> RunResult:
    child = spawn([str(cli.path), *DUPLEX], cli.env(ctx.base_url), ctx.work, stdin=True)
    _, answered = _initialize(child)
    child.close_stdin()
    done = child.finish()
    return RunResult({"initialize": answered, "exit": done.t, "rss": done.maxrss_mb})


def run_duplex(cli: Cli, ctx: Ctx) -> RunResult:
    child = spawn([str(cli.path), *DUPLEX], cli.env(ctx.base_url), ctx.work, stdin=True)
    _initialize(child)
    turns = [_turn(child, f"hi {i}") for i in range(DUPLEX_TURNS)]
    child.close_stdin()
    done = child.finish()
    steady = statistics.median(turns[1:])
    return RunResult({
        "first_turn": turns[0],
        "turn": steady,
        "first_vs_steady": turns[0] / steady,
        "rss": done.maxrss_mb,
    })


def run_duplex_idle(cli: Cli, ctx: Ctx) -> RunResult:
    """As run_duplex, but the first prompt comes a while after the initialize answer, as
    from a client that connects first and is given its prompt later: the CLI may use the
    wait to get ready for the first turn."""
    child = spawn([str(cli.path), *DUPLEX], cli.env(ctx.base_url), ctx.work, stdin=True)
    _initialize(child)
    time.sleep(IDLE_BEFORE_FIRST_PROMPT)
    turns = [_turn(child, f"hi {i}") for i in range(DUPLEX_TURNS)]
    child.close_stdin()
    done = child.finish()
    steady = statistics.median(turns[1:])
    return RunResult({
        "first_turn": turns[0],
        "turn": steady,
        "first_vs_steady": turns[0] / steady,
        "rss": done.maxrss_mb,
    })


def run_memory(cli: Cli, ctx: Ctx) -> RunResult:
    """Peak RSS (VmHWM) of one session after 10 turns and after 1,000 (50 with --quick), and
    the CPU per turn early on (turns 11–110: past the first turn's one-off costs) against
    the last 100 turns, which shows what grows with the history. Windows of 100 turns, not
    10: ten of wisp's turns are about 15 ms of CPU, which a loaded machine's noise swamps
    (with --quick, 10-turn windows)."""
    total = 50 if ctx.quick else 1000
    window = 10 if ctx.quick else 100
    child = spawn([str(cli.path), *DUPLEX], cli.env(ctx.base_url), ctx.work, stdin=True)
    _initialize(child)
    times: list[float] = []
    hwm10 = 0.0
    cpu_at: dict[int, float] = {}  # turns done -> the child's CPU seconds
    for i in range(total):
        if i in (10, 10 + window, total - window):
            cpu_at[i] = child.cpu_s()
        times.append(_turn(child, f"turn {i}: say ok"))
        if i + 1 == 10:
            hwm10 = child.hwm_mb()
    cpu_at[total] = child.cpu_s()
    hwm_end = child.hwm_mb()
    cpu_early = (cpu_at[10 + window] - cpu_at[10]) / window
    cpu_late = (cpu_at[total] - cpu_at[total - window]) / window
    child.close_stdin()
    child.finish(timeout=120)
    return RunResult(
        {
            "hwm10": hwm10,
            "hwm_end": hwm_end,
            "growth": hwm_end / hwm10,
            "turn_early": statistics.median(times[:10]),
            "turn_late": statistics.median(times[-10:]),
            "cpu_early": cpu_early,
            "cpu_late": cpu_late,
            "cpu_growth": cpu_late / cpu_early,
        },
        {"turns": f"{total} turns in one session"},
    )


# --- tools ----------------------------------------------------------------------------------


def run_tools50(cli: Cli, ctx: Ctx) -> RunResult:
    sample = _sample_file(ctx.work)
    prompt = TOOLS50.format(path=sample) + " run these"
    argv = [str(cli.path), "-p", prompt, *STREAM, *BYPASS]
    child = spawn(argv, cli.env(ctx.base_url, bypass=True), ctx.work)
    first_tool = child.wait_for(lambda ln: _has_block(ln, "assistant", "tool_use"))
    results: list[Line] = []
    while True:
        line = child.next_line(120)
        if line is None:
            raise BenchError(f"no result frame; {child.stderr_tail()}")
        if _has_block(line, "user", "tool_result"):
            results.append(line)
        if line.kind == "result":
            break
    done = child.finish()
    blocks = [b for ln in results for b in _blocks(ln) if b.get("type") == "tool_result"]
    errors = [b for b in blocks if b.get("is_error")]
    if len(blocks) != TOOL_CALLS or errors:
        raise BenchError(f"{len(blocks)} tool results, {len(errors)} errors: {errors[:2]}")
    return RunResult({
        "tools": results[-1].t - first_tool.t,
        "result": line.t,
        "exit": done.t,
        "rss": done.maxrss_mb,
        "cpu": done.cpu,
    })


def run_bigout(cli: Cli, ctx: Ctx) -> RunResult:
    """The 10 MB Bash output, first on the raw wire, then through the official Python SDK."""
    argv = [str(cli.path), "-p", f"{BIGOUT} go", *STREAM, *BYPASS]
    child = spawn(argv, cli.env(ctx.base_url, bypass=True), ctx.work)
    result = _result(child, 300)
    done = child.finish(300)
    wire = RunResult({
        "result": result.t,
        "max_line": float(child.max_line),
        "rss": done.maxrss_mb,
    })
    via_sdk = sdk.bigout(cli, ctx)
    wire.values.update(via_sdk.values)
    wire.notes.update(via_sdk.notes)
    return wire


def _sample_file(work: Path) -> Path:
    path = work / "sample.txt"
    if not path.exists():
        path.write_text("".join(f"line {i}: the quick brown fox\n" for i in range(200)))
    return path


def _blocks(line: Line) -> list[dict[str, object]]:
    content = (line.frame or {}).get("message", {}).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _has_block(line: Line, kind: str, block: str) -> bool:
    return line.kind == kind and any(b.get("type") == block for b in _blocks(line))


# --- the table ------------------------------------------------------------------------------

RSS = "peak RSS"
CPU = "CPU time, user + system"  # steadier than wall time on a shared machine

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "version",
        "`--version`",
        (
            Metric("wall", "wall time", "s", abs_target=0.035),
            Metric("rss", RSS, "MB"),
            Metric("cpu", CPU, "s"),
        ),
        run_version,
        ALL,
    ),
    Scenario(
        "print",
        '`-p "hi"` stream-json',
        (
            Metric("first", "first stdout frame", "s", 0.25, 0.08),
            Metric("assistant", "first assistant frame", "s"),
            Metric("result", "result frame", "s", 0.5, 0.19),
            Metric("exit", "process exit", "s", 0.5),
            Metric("rss", RSS, "MB", 0.33, 65),
            Metric("cpu", CPU, "s"),
        ),
        run_print,
        ALL,
    ),
    Scenario(
        "initialize",
        "duplex initialize",
        (
            Metric("initialize", "initialize answer after spawn", "s", 0.25),
            Metric("exit", "exit after stdin EOF", "s"),
            Metric("rss", RSS, "MB", 0.33),
        ),
        run_initialize,
        ALL,
    ),
    Scenario(
        "duplex",
        f"duplex, {DUPLEX_TURNS} turns",
        (
            Metric("first_turn", "first turn (prompt → result)", "s"),
            Metric("turn", "per turn, turns 2–20 (median)", "s", 0.5),
            Metric("first_vs_steady", "first turn ÷ per turn", "x", abs_target=2.0),
            Metric("rss", RSS, "MB", 0.33),
        ),
        run_duplex,
    ),
    Scenario(
        "duplex-idle",
        f"duplex, first prompt {IDLE_BEFORE_FIRST_PROMPT:g} s after initialize",
        (
            Metric("first_turn", "first turn (prompt → result)", "s"),
            Metric("turn", "per turn, turns 2–20 (median)", "s", 0.5),
            Metric("first_vs_steady", "first turn ÷ per turn", "x", abs_target=2.0),
            Metric("rss", RSS, "MB", 0.33),
        ),
        run_duplex_idle,
    ),
    Scenario(
        "tools50",
        f"{TOOL_CALLS} tool calls (Read+Bash)",
        (
            Metric("tools", "first tool_use → last tool_result", "s"),
            Metric("result", "result frame", "s", 0.5),
            Metric("exit", "process exit", "s", 0.5),
            Metric("rss", RSS, "MB", 0.33),
            Metric("cpu", CPU, "s"),
        ),
        run_tools50,
    ),
    Scenario(
        "memory",
        "memory, 1,000 duplex turns",
        (
            Metric("hwm10", "peak RSS after 10 turns", "MB", 0.33),
            Metric("hwm_end", "peak RSS after 1,000 turns", "MB", 0.33),
            Metric("growth", "growth 10 → 1,000 turns", "x", abs_target=1.2),
            Metric("turn_early", "turn time, turns 1–10", "s"),
            Metric("turn_late", "turn time, last 10 turns", "s"),
            Metric("cpu_early", "CPU per turn, turns 11–110", "s"),
            Metric("cpu_late", "CPU per turn, last 100 turns", "s"),
            Metric("cpu_growth", "CPU per turn, last 100 ÷ turns 11–110", "x", abs_target=1.5),
        ),
        run_memory,
        max_reps=1,
    ),
    Scenario(
        "sdk",
        "Python SDK",
        (
            Metric("query", "per `query()` (spawn → result → exit)", "s", 0.5),
            Metric("connect", "`ClaudeSDKClient` connect + first turn", "s"),
            Metric("client_turn", "per `ClaudeSDKClient` turn (median)", "s", 0.5),
        ),
        sdk.overhead,
        needs_sdk=True,
        max_reps=5,
    ),
    Scenario(
        "bigout",
        "10 MB tool output",
        (
            Metric("result", "stream-json: result frame", "s"),
            Metric("max_line", "stream-json: longest stdout line", "B"),
            Metric("rss", f"stream-json: {RSS}", "MB", 0.33),
            Metric("sdk_wall", "Python SDK: `query()` wall time", "s"),
            Metric("sdk_chars", "Python SDK: tool_result chars received", "chars"),
        ),
        run_bigout,
        needs_sdk=True,
        max_reps=3,
    ),
)
