"""wisp against the reference CLI, side by side, on one scripted Messages API server.

    .venv/bin/python bench/run.py [--n N] [--quick] [--scenario NAME ...] [--no-reference]

Runs alternate between the CLIs (ABBA order, so drift from other load on the machine hits
both alike), N runs each after one discarded warm-up run. Prints a markdown table of
min / median / max and the wisp/reference ratio of medians, and writes the samples to
bench/results/<utc time>.json and bench/results/latest.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import clis, sdk
from benchlib.clis import REFERENCE, WISP, Cli
from benchlib.model import Ctx, RunResult, Scenario
from benchlib.proc import BenchError
from benchlib.provenance import git_head, log
from benchlib.report import Notes, Samples, notes_block, table, write_json
from benchlib.scenarios import SCENARIOS, run_initialize, run_print

BENCH = Path(__file__).resolve().parent


@dataclass
class Bench:
    """One invocation's shared state: where to run, what to run, what was measured."""

    args: argparse.Namespace
    base_url: str
    work: Path
    variants: list[Cli]
    samples: Samples = field(default_factory=dict)
    notes: Notes = field(default_factory=dict)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.wisp_src is not None:
        clis.SRC = args.wisp_src.resolve()
    scenarios = _select(args)
    reference = _reference(args)
    with _workdir(args.keep) as work, _server() as base_url:
        clis.prepare_bytecode()
        variants = clis.make_clis(work, reference, with_src=not args.no_src)
        _warm_caches(variants, base_url, work)
        bench = Bench(args, base_url, work, variants)
        for scenario in scenarios:
            _run_scenario(bench, scenario)
    meta = _meta(args, reference)
    lines = _render(scenarios, bench, meta)
    print("\n".join(lines))
    _save(bench, meta, scenarios, lines)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    names = [s.name for s in SCENARIOS]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=5, help="runs per CLI and scenario (default 5)")
    p.add_argument("--quick", action="store_true",
                   help="one run, no warm-up, short sessions: checks the runner, not speed")
    p.add_argument("--scenario", action="append", choices=names, metavar="NAME",
                   help=f"run only these (repeatable): {', '.join(names)}")
    p.add_argument("--reference", metavar="PATH", help="the reference CLI binary "
                   f"(default {clis.REFERENCE_BIN.relative_to(clis.ROOT)})")
    p.add_argument("--no-reference", action="store_true", help="run wisp alone")
    p.add_argument("--install-reference", action="store_true",
                   help=f"npm install claude-code@{clis.REFERENCE_VERSION} if it is missing")
    p.add_argument("--no-src", action="store_true", help="skip the wisp-without-.pyc variant")
    p.add_argument("--wisp-src", type=Path, metavar="DIR",
                   help="import wisp from DIR (a src/ tree holding wisp/) instead of src/")
    p.add_argument("--out", type=Path, default=BENCH / "results", help="where results go")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = p.parse_args(argv)
    if args.quick:
        args.n = 1
    return args


def _select(args: argparse.Namespace) -> list[Scenario]:
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    if any(s.needs_sdk for s in chosen) and sdk.available() is None:
        log("claude-agent-sdk is not installed: skipping the SDK scenarios")
        chosen = [s for s in chosen if not s.needs_sdk]
    return chosen


def _reference(args: argparse.Namespace) -> Path | None:
    if args.no_reference:
        return None
    found = clis.find_reference(args.reference)
    if found is None and args.install_reference:
        found = clis.find_reference(str(clis.install_reference()))
    if found is None:
        log("reference CLI not found: reporting wisp alone (--install-reference fetches it)")
    return found


@contextlib.contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="wisp-bench-"))
    try:
        yield work
    finally:
        if keep:
            log(f"scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _server() -> Iterator[str]:
    """bench/serve.py in its own process; closing its stdin stops it."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / "serve.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
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


def _warm_caches(variants: list[Cli], base_url: str, work: Path) -> None:
    """Fill wisp's bytecode cache with every module the scenarios import, then derive the
    no-.pyc cache from it; let the reference create its ~/.claude.json on a discarded run."""
    ctx = Ctx(base_url, work / "warm", quick=True)
    ctx.work.mkdir()
    for cli in variants:
        if cli.name in (WISP, REFERENCE):
            for run in (run_print, run_initialize):  # the start-up paths wisp-src is run on
                _attempt(run, cli, ctx)
    clis.refresh_src_cache()


def _run_scenario(bench: Bench, scenario: Scenario) -> None:
    args = bench.args
    ctx = Ctx(bench.base_url, bench.work / scenario.name, quick=args.quick)
    ctx.work.mkdir()
    chosen = [c for c in bench.variants if c.name in scenario.variants]
    reps = min(args.n, scenario.max_reps or args.n)
    if not args.quick and (scenario.max_reps or 2) > 1:
        for cli in chosen:  # warm-up: page cache, first-run files, lazy imports
            _attempt(scenario.run, cli, ctx)
    per_cli = bench.samples.setdefault(scenario.name, {})
    scenario_notes = bench.notes.setdefault(scenario.name, {})
    for rep in range(reps):
        order = chosen if rep % 2 == 0 else chosen[::-1]
        for cli in order:
            log(f"{scenario.name}: {cli.name} run {rep + 1}/{reps}")
            result = _attempt(scenario.run, cli, ctx)
            for key, value in result.values.items():
                per_cli.setdefault(cli.name, {}).setdefault(key, []).append(value)
            for note in result.notes.values():
                scenario_notes.setdefault(cli.name, []).append(note)


def _attempt(run: Callable[[Cli, Ctx], RunResult], cli: Cli, ctx: Ctx) -> RunResult:
    """One run; a failure becomes a note in the report instead of ending the bench."""
    try:
        return run(cli, ctx)
    except (BenchError, OSError, subprocess.SubprocessError) as exc:
        log(f"  {cli.name} failed: {exc}")
        return RunResult(notes={"failed": f"run failed: {str(exc)[:300]}"})


def _meta(args: argparse.Namespace, reference: Path | None) -> dict[str, object]:
    from wisp import __version__

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join([".venv/bin/python", "bench/run.py", *sys.argv[1:]]),
        "n": args.n,
        "quick": args.quick,
        "cpus": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "wisp": __version__,
        "wisp_commit": git_head() if args.wisp_src is None else f"src {clis.SRC}",
        "reference": clis.reference_version(reference) if reference else None,
        "claude_agent_sdk": sdk.available(),
    }


def _render(scenarios: list[Scenario], bench: Bench, meta: dict[str, object]) -> list[str]:
    ref = meta["reference"] or "absent: wisp alone"
    load = meta["loadavg_end"]
    assert isinstance(load, tuple)
    lines = [
        f"wisp {meta['wisp']} ({meta['wisp_commit']}) vs reference {ref}; "
        f"n={meta['n']} runs each, medians; {meta['cpus']} CPUs, "
        f"load {load[0]:.2f}; python {meta['python']}",
        "",
        *table(scenarios, bench.samples),
    ]
    if extra := notes_block(scenarios, bench.notes):
        lines += ["", "Notes:", *extra]
    return lines


def _save(bench: Bench, meta: dict[str, object], scenarios: list[Scenario],
          lines: list[str]) -> None:
    out: Path = bench.args.out
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    write_json(out / f"{stamp}.json", meta, scenarios, bench.samples, bench.notes)
    shutil.copyfile(out / f"{stamp}.json", out / "latest.json")
    (out / "latest.md").write_text("\n".join(lines) + "\n")
    log(f"results: {out / (stamp + '.json')}")


if __name__ == "__main__":
    raise SystemExit(main())
