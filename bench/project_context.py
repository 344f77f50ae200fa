"""What reading a project's files costs at start-up, side by side in one run.

    .venv/bin/python bench/project_context.py [--n 10] [--base REV] [--reference]

Variants, alternated run by run because the machine is noisy:
- `empty`: `wisp -p hi` in a project with none of the files (CLAUDE.md, agents, skills);
- `heavy`: the same in a project with a 50 KB CLAUDE.md (importing a second file), 20
  agent files and 10 skills;
- `empty@base` (with `--base REV`): the empty project on an older commit, to show that the
  empty case did not get slower;
- `reference empty` / `reference heavy` (with `--reference`, when the reference CLI is in
  .bench-cache/): Claude Code on the same two projects.

Reported: time to the first frame (`system/init`) and to the result, peak RSS, medians,
and ratios against `empty`. Also the in-process cost of `load_project_context` alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.firstframe import (
    ROOT,
    isolated_env,
    median,
    one_run,
    remove_worktree,
    start_server,
    worktree,
)
from benchlib.provenance import git_head, log

STREAM = ("-p", "hi", "--output-format", "stream-json", "--verbose")
REFERENCE = ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude"


def heavy_project(work: Path) -> None:
    """50 KB of CLAUDE.md (one import), 20 agents, 10 skills."""
    (work / ".git").mkdir(parents=True, exist_ok=True)
    line = "- Keep functions short and name them for what they do; comment the why.\n"
    body = line * (50_000 // len(line))
    (work / "CLAUDE.md").write_text(f"# Rules\n@docs/more.md\n{body}")
    (work / "docs").mkdir(exist_ok=True)
    (work / "docs" / "more.md").write_text("More rules.\n" * 40)
    agents = work / ".claude" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    for i in range(20):
        (agents / f"agent{i}.md").write_text(
            f"---\nname: agent{i}\ndescription: Agent number {i}\ntools: Read, Grep\n---\n"
            f"You are agent {i}. " * 20 + "\n")
    for i in range(10):
        folder = work / ".claude" / "skills" / f"skill{i}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill{i}\ndescription: Skill number {i}\n---\n" + "Step.\n" * 200)


def in_process_cost(work: Path, home: Path, n: int = 200) -> float:
    """Median ms of one `load_project_context` for `work`."""
    from wisp.project.context import load_project_context

    env = {"HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp")}
    times = []
    for _ in range(n):
        started = time.perf_counter()
        load_project_context(work, env, setting_sources=None)
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--base", help="also run the empty project on this git revision")
    parser.add_argument("--reference", action="store_true",
                        help="also run the reference CLI (if installed in .bench-cache/)")
    args = parser.parse_args()
    server, url = start_server()
    samples: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        home = tmpdir / "home"
        home.mkdir()
        empty, heavy = tmpdir / "empty", tmpdir / "heavy"
        empty.mkdir()
        (empty / ".git").mkdir()
        heavy_project(heavy)
        here = ROOT / "src"
        wisp = [sys.executable, "-m", "wisp", *STREAM]
        variants: dict[str, tuple[Path, list[str], Path]] = {
            "empty": (here, wisp, empty), "heavy": (here, wisp, heavy)}
        if args.base:
            variants["empty@base"] = (worktree(args.base, tmpdir / "base"), wisp, empty)
        if args.reference and REFERENCE.exists():
            reference = [str(REFERENCE), *STREAM]
            variants["reference empty"] = (here, reference, empty)
            variants["reference heavy"] = (here, reference, heavy)
        try:
            for rep in range(args.n + 1):  # the first round warms caches and is dropped
                for name, (src, argv, work) in variants.items():
                    env = {**isolated_env(url, home, src),
                           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
                    run = one_run(argv, env, work)
                    if rep:
                        samples.setdefault(name, []).append(run)
                log(f"round {rep}/{args.n}")
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait()
            if args.base:
                remove_worktree(tmpdir / "base")
        costs = {"empty": in_process_cost(empty, home), "heavy": in_process_cost(heavy, home)}
    print(_table(samples, costs, args))
    return 0


def _table(samples: dict[str, list[dict[str, float]]], costs: dict[str, float],
           args: argparse.Namespace) -> str:
    lines = [f"wisp {git_head()}; n={args.n}; medians; 2 CPUs, load "
             f"{os.getloadavg()[0]:.2f}", "",
             "| variant | first frame | result | peak RSS | first frame ÷ empty |",
             "|---|---|---|---|---|"]
    base = median(samples["empty"], "first")
    for name, runs in samples.items():
        first = median(runs, "first")
        lines.append(f"| {name} | {first:.0f} ms | {median(runs, 'result'):.0f} ms | "
                     f"{median(runs, 'rss'):.1f} MB | {first / base:.2f} |")
    lines += ["", "load_project_context in process (median of 200): "
              f"empty {costs['empty']:.3f} ms, heavy {costs['heavy']:.3f} ms", "",
              json.dumps(samples)]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
