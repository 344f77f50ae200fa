"""wisp.sdk against its targets: what the SDK itself costs, beyond the model's own time.

    .venv/bin/python bench/sdk.py [--n N] [--quick] [--json [PATH]] [--no-reference]

The model is a scripted Messages API server answering every request with a short text at
once (zero delay), in a process of its own, so its work neither shares the GIL with the
SDK nor counts in the SDK's RSS. Each measurement runs in a fresh worker process
(bench/sdk_worker.py); figures are MEDIANS over repeated runs:

- first `query()` in a fresh process: `import wisp.sdk` plus the query (reported apart:
  a warm `query()` does not pay the imports);
- in-process `query()` overhead: a warm one-shot `query()` ("hi", a text reply) minus the
  same HTTP exchange on its own. The exchange replays the requests the SDK sent (recorded
  on a warm-up) with a minimal client that reads the response to its end and parses
  nothing, over a new connection as each `query()` opens; target ≤ 5 ms. The CPU time
  the SDK's process spends beyond the minimal client's is shown too: on a busy machine
  wall times carry waits for a CPU, CPU times much less so;
- `ClaudeSDKClient.connect()` (target ≤ 5 ms) and `disconnect()` after a turn;
- steady per-turn overhead of one client: turn time minus the replayed turn's exchange
  on a kept-alive connection; target ≤ 1 ms;
- 100 concurrent in-process sessions (`asyncio.gather` of clients, each connecting and
  running one turn): all must complete; wall time, and VmRSS growth per extra session;
- RSS with one in-process session open (target ≤ 40 MB), and after 1,000 turns in one
  client against after 10 (target ratio ≤ 1.1);
- the subprocess transport: `wisp.sdk` and the official `claude_agent_sdk` driving the
  same CLI (`wisp`, and the reference CLI when installed in .bench-cache/), alternating
  ABBA in one worker; ratio of medians, target ≤ 1 (wisp.sdk no slower). Also shown: the
  median of each rep's side-by-side ratio, and in how many reps wisp.sdk was faster.

Prints a markdown table; `--json PATH` also writes the rows and every sample as JSON
(`--json` alone prints the JSON instead of the table).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import clis
from benchlib.clis import Cli
from benchlib.provenance import git_head, log

BENCH = Path(__file__).resolve().parent
WORKER = BENCH / "sdk_worker.py"
MS = 1e-3
Unit = Literal["s", "MB", "x", "count"]


@dataclass
class Row:
    what: str
    median: float | None  # None: not measured (the note says why)
    unit: Unit
    target: float | None = None  # the median must be ≤ this; None: no target
    shown: str | None = None  # overrides the formatted median
    target_shown: str | None = None  # overrides the formatted target
    verdict: str | None = None  # overrides the comparison with `target`
    note: str = ""

    @property
    def met(self) -> str:
        if self.verdict is not None:
            return self.verdict
        if self.target is None or self.median is None:
            return "—"
        return "met" if self.median <= self.target else "MISSED"


@dataclass
class Plan:
    """How much to run: `--quick` checks the bench works, not how fast anything is."""

    n: int  # samples per in-process timing (query, connect, turn)
    fresh: int  # fresh processes for the first query
    runs: int  # worker runs of the concurrent and memory measurements
    sessions: int
    turns: tuple[int, int]  # RSS after this many turns vs after that many
    steady_turns: int
    sub_reps: int
    sub_turns: int
    ref_reps: int


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    plan = _plan(args)
    reference = None if args.no_reference else clis.find_reference(args.reference)
    clis.prepare_bytecode()  # wisp's .pyc in .bench-cache, as an installed wheel has them
    rows: list[Row] = []
    samples: dict[str, Any] = {}
    with _workdir(args.keep) as work, _server() as base_url:
        bench = Bench(base_url, work)
        bench.first(plan, rows, samples)
        bench.inprocess(plan, rows, samples)
        bench.concurrent(plan, rows, samples)
        bench.memory(plan, rows, samples)
        if not args.no_subprocess:
            bench.transports(plan, rows, samples, reference)
    meta = _meta(args, plan, reference)
    lines = _render(rows, meta)
    payload = {"meta": meta, "rows": [_row_json(r) for r in rows], "samples": samples}
    if args.json == "-":
        print(json.dumps(payload, indent=1))
    else:
        print("\n".join(lines))
        if args.json:
            Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")
            log(f"results: {args.json}")
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=30,
                   help="samples per in-process timing (default 30)")
    p.add_argument("--quick", action="store_true",
                   help="a few samples, 10 sessions, short sessions: checks the bench runs")
    p.add_argument("--json", nargs="?", const="-", metavar="PATH",
                   help="also write the results as JSON to PATH (alone: print JSON only)")
    p.add_argument("--reference", metavar="PATH", help="the reference CLI binary "
                   f"(default {clis.REFERENCE_BIN.relative_to(clis.ROOT)})")
    p.add_argument("--no-reference", action="store_true",
                   help="skip the SDKs driving the reference CLI")
    p.add_argument("--no-subprocess", action="store_true",
                   help="skip the subprocess transport comparison")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    return p.parse_args(argv)


def _plan(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(n=2, fresh=1, runs=1, sessions=10, turns=(10, 20), steady_turns=3,
                    sub_reps=1, sub_turns=1, ref_reps=1)
    return Plan(n=args.n, fresh=5, runs=3, sessions=100, turns=(10, 1000), steady_turns=50,
                sub_reps=20, sub_turns=5, ref_reps=10)


class Bench:
    def __init__(self, base_url: str, work: Path) -> None:
        self.base_url = base_url
        self.work = work

    def _cli(self, name: str, path: Path, *, wisp_bytecode: bool = True) -> Cli:
        extra = (("PYTHONPYCACHEPREFIX", str(clis.PYC_WARM)),) if wisp_bytecode else ()
        home = self.work / "home" / name
        home.mkdir(parents=True, exist_ok=True)
        return Cli(name, path, home, extra)

    def _worker(self, mode: str, *extra: str, cli: Cli | None = None,
                timeout: float = 900) -> dict[str, Any]:
        """One fresh worker process; its JSON. The environment is a CLI's bench environment
        (offline, its own HOME, the scripted server), which the SDKs pass on to a CLI."""
        cli = cli or self._cli("inprocess", clis.WISP_BIN)
        cwd = self.work / mode
        cwd.mkdir(exist_ok=True)
        env = cli.env(self.base_url)
        env.setdefault("PYTHONPYCACHEPREFIX", str(clis.PYC_WARM))  # the worker's own imports
        proc = subprocess.run(
            [sys.executable, str(WORKER), mode, "--cwd", str(cwd), *extra], env=env, cwd=cwd,
            capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"bench/sdk_worker.py {mode} failed ({proc.returncode}):\n"
                             f"{proc.stderr[-2000:]}")
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        return result

    def first(self, plan: Plan, rows: list[Row], samples: dict[str, Any]) -> None:
        self._worker("first")  # discarded: fills the bytecode cache, warms the page cache
        runs = []
        for i in range(plan.fresh):
            log(f"first query: fresh process {i + 1}/{plan.fresh}")
            runs.append(self._worker("first"))
        samples["first"] = runs
        rows.append(Row("first `query()` in a fresh process (import + query)",
                        _median(r["first_query"] for r in runs), "s"))
        rows.append(Row("… of which `import wisp.sdk` (asyncio already imported)",
                        _median(r["import"] for r in runs), "s"))

    def inprocess(self, plan: Plan, rows: list[Row], samples: dict[str, Any]) -> None:
        log(f"in-process: {plan.n} queries, connects and {plan.steady_turns} turns")
        out = self._worker("inprocess", "--reps", str(plan.n), "--turns", str(plan.steady_turns))
        samples["inprocess"] = out
        query, exchange = _median(out["query"]), _median(out["query_exchange"])
        rows += [
            Row("in-process `query()`, warm", query, "s"),
            Row("… the same HTTP exchange alone", exchange, "s",
                note=f"{out['query_requests']} request(s) replayed on a new connection"),
            Row("in-process `query()` overhead beyond the exchange", query - exchange, "s",
                target=5 * MS),
            Row("… CPU time of a `query()` beyond the exchange's (load-proof)",
                _median(out["query_cpu"]) - _median(out["query_exchange_cpu"]), "s"),
            Row("`ClaudeSDKClient.connect()`", _median(out["connect"]), "s", target=5 * MS),
            Row("`ClaudeSDKClient.disconnect()` after a turn", _median(out["disconnect"]), "s"),
        ]
        turn, turn_exchange = _median(out["turn"]), _median(out["turn_exchange"])
        rows += [
            Row(f"client turn, steady ({plan.steady_turns} turns after 3)", turn, "s"),
            Row("… the same HTTP exchange alone (kept-alive connection)", turn_exchange, "s"),
            Row("per-turn overhead beyond the exchange", turn - turn_exchange, "s",
                target=1 * MS),
            Row("… CPU time of a turn beyond the exchange's (load-proof)",
                _median(out["turn_cpu"]) - _median(out["turn_exchange_cpu"]), "s"),
        ]

    def concurrent(self, plan: Plan, rows: list[Row], samples: dict[str, Any]) -> None:
        runs = []
        for i in range(plan.runs):
            log(f"{plan.sessions} concurrent sessions: run {i + 1}/{plan.runs}")
            runs.append(self._worker("concurrent", "--sessions", str(plan.sessions)))
        samples["concurrent"] = runs
        completed = min(r["completed"] for r in runs)
        rows += [
            Row(f"{plan.sessions} concurrent in-process sessions: completed", completed,
                "count", shown=f"{completed}/{plan.sessions} (worst of {len(runs)} runs)",
                target_shown=f"all {plan.sessions}",
                verdict="met" if completed == plan.sessions else "MISSED"),
            Row(f"… wall time, {plan.sessions} × (connect + one turn)",
                _median(r["wall"] for r in runs), "s"),
            Row("… RSS growth per extra open session", _median(r["per_extra"] for r in runs),
                "MB"),
            Row("… disconnect all at once", _median(r["disconnect_all"] for r in runs), "s"),
        ]

    def memory(self, plan: Plan, rows: list[Row], samples: dict[str, Any]) -> None:
        few, many = plan.turns
        runs = []
        for i in range(plan.runs):
            log(f"memory: {many} turns, run {i + 1}/{plan.runs}")
            runs.append(self._worker("memory", "--turns", str(few), str(many)))
        samples["memory"] = runs
        ratios = [r["rss"][str(many)] / r["rss"][str(few)] for r in runs]
        rows += [
            Row("RSS, interpreter with asyncio, before `import wisp.sdk`",
                _median(r["rss"]["bare"] for r in runs), "MB"),
            Row("RSS with one in-process session open", _median(
                r["rss"]["one_session"] for r in runs), "MB", target=40),
            Row(f"RSS after {few} turns", _median(r["rss"][str(few)] for r in runs), "MB"),
            Row(f"RSS after {many:,} turns", _median(r["rss"][str(many)] for r in runs), "MB"),
            Row(f"RSS after {many:,} turns ÷ after {few}", _median(ratios), "x", target=1.1),
        ]

    def transports(self, plan: Plan, rows: list[Row], samples: dict[str, Any],
                   reference: Path | None) -> None:
        if _official_sdk() is None:
            rows.append(Row("subprocess transport", None, "x",
                            note="claude-agent-sdk is not installed: not compared"))
            return
        self.subprocess(plan, rows, samples, name="wisp", path=clis.WISP_BIN,
                        reps=plan.sub_reps)
        if reference is None:
            rows.append(Row("subprocess, reference CLI", None, "x", note="reference CLI not "
                            "found or --no-reference (bench/run.py --install-reference)"))
            return
        self.subprocess(plan, rows, samples, name="reference", path=reference,
                        reps=plan.ref_reps)

    def subprocess(self, plan: Plan, rows: list[Row], samples: dict[str, Any], *,
                   name: str, path: Path, reps: int) -> None:
        log(f"subprocess transport, cli={name}: {reps} reps per SDK")
        cli = self._cli(name, path, wisp_bytecode=name == "wisp")
        out = self._worker("subprocess", "--cli", str(path), "--reps", str(reps),
                           "--turns", str(plan.sub_turns), cli=cli)
        samples[f"subprocess_{name}"] = out
        for key, label in (("query", "one-shot `query()`"),
                           ("turn", "client turn, steady")):
            ours, official = _median(out["wisp.sdk"][key]), _median(out["official"][key])
            # The same rep's runs were side by side: their ratio is immune to slow drift.
            paired = [a / b for a, b in zip(out["wisp.sdk"][key], out["official"][key],
                                            strict=True)]
            rows.append(Row(
                f"subprocess, cli={name}: {label}, wisp.sdk ÷ official", ours / official, "x",
                target=1.0, shown=f"{ours / official:.2f}× ({_fmt(ours, 's')} vs "
                                  f"{_fmt(official, 's')}; paired {_median(paired):.2f}×, "
                                  f"faster in {sum(r < 1 for r in paired)}/{len(paired)})"))


def _official_sdk() -> str | None:
    try:
        from importlib.metadata import version

        return version("claude-agent-sdk")
    except Exception:
        return None


def _median(values: Any) -> float:
    return float(statistics.median(list(values)))


@contextlib.contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="wisp-sdk-bench-"))
    try:
        yield work
    finally:
        if keep:
            log(f"scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _server() -> Iterator[str]:
    """The scripted model in its own process; closing its stdin stops it."""
    proc = subprocess.Popen([sys.executable, str(WORKER), "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"bench server did not start (said {url!r})")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _fmt(value: float | None, unit: Unit) -> str:
    if value is None:
        return "—"
    if unit == "s":
        return f"{value / MS:.2f} ms" if abs(value) < 0.1 else f"{value / MS:.0f} ms"
    if unit == "MB":
        return f"{value:.1f} MB" if abs(value) >= 1 else f"{value * 1024:.0f} KB"
    if unit == "x":
        return f"{value:.3f}×"
    return f"{value:g}"


def _render(rows: list[Row], meta: dict[str, Any]) -> list[str]:
    load = meta["loadavg_end"]
    lines = [
        f"wisp.sdk {meta['wisp']} ({meta['wisp_commit']}); official claude-agent-sdk "
        f"{meta['claude_agent_sdk'] or 'absent'}; reference {meta['reference'] or 'absent'}; "
        f"medians; {meta['cpus']} CPUs, load {load[0]:.2f}; python {meta['python']}"
        + ("; --quick: not a measurement" if meta["quick"] else ""),
        "",
        "| what | median | target | met? |",
        "|---|---|---|---|",
    ]
    for row in rows:
        shown = row.shown or _fmt(row.median, row.unit)
        target = row.target_shown or ("—" if row.target is None
                                      else f"≤ {_fmt(row.target, row.unit)}")
        if row.median is None:
            shown = row.note
        lines.append(f"| {row.what} | {shown} | {target} | {row.met} |")
    notes = [f"- {r.what}: {r.note}" for r in rows if r.note and r.median is not None]
    if notes:
        lines += ["", "Notes:", *notes]
    return lines


def _row_json(row: Row) -> dict[str, Any]:
    return {**asdict(row), "met": row.met}


def _meta(args: argparse.Namespace, plan: Plan, reference: Path | None) -> dict[str, Any]:
    from wisp import __version__

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join([".venv/bin/python", "bench/sdk.py", *sys.argv[1:]]),
        "quick": args.quick,
        "plan": asdict(plan),
        "cpus": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "wisp": __version__,
        "wisp_commit": git_head(),
        "claude_agent_sdk": _official_sdk(),
        "reference": clis.reference_version(reference) if reference else None,
    }


if __name__ == "__main__":
    raise SystemExit(main())
