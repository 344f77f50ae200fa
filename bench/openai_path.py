"""The OpenAI-compatible provider against the Anthropic path, side by side in one run.

    .venv/bin/python bench/openai_path.py [--n 10] [--base REV]

Both paths run the same `wisp -p hi` (stream-json) against one scripted server process
that speaks both APIs (`wisp.testing.ScriptedServer`), alternating run by run because the
machine is noisy: the Anthropic path (`claude-…`, `/v1/messages`) and the OpenAI path
(`--model openai:gpt-bench`, `/v1/chat/completions`). Reported: time to the first frame
(`system/init`), to the result, and peak RSS, as medians and as OpenAI ÷ Anthropic ratios
(target: within 10%).

`--base REV` also runs the Anthropic path of an older commit (a temporary git worktree),
interleaved with the others, to show that path's first frame and RSS did not change.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--base", help="also run the Anthropic path of this git revision")
    args = parser.parse_args()
    server, url = start_server()
    samples: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "work").mkdir()
        (tmpdir / "home").mkdir()
        here = ROOT / "src"
        variants = {"anthropic": (here, []), "openai": (here, ["--model", "openai:gpt-bench"])}
        if args.base:
            variants["anthropic@base"] = (worktree(args.base, tmpdir / "base"), [])
        try:
            for rep in range(args.n + 1):  # the first round warms caches and is dropped
                for name, (src, extra) in variants.items():
                    argv = [sys.executable, "-m", "wisp", *STREAM, *extra]
                    run = one_run(argv, isolated_env(url, tmpdir / "home", src), tmpdir / "work")
                    if rep:
                        samples.setdefault(name, []).append(run)
                log(f"round {rep}/{args.n}")
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait()
            if args.base:
                remove_worktree(tmpdir / "base")
    print(_table(samples, args))
    return 0


def _table(samples: dict[str, list[dict[str, float]]], args: argparse.Namespace) -> str:
    lines = [f"wisp {git_head()}; n={args.n}; medians; 2 CPUs, load "
             f"{os.getloadavg()[0]:.2f}", "",
             "| path | first frame | result | peak RSS |", "|---|---|---|---|"]
    for name, runs in samples.items():
        lines.append(f"| {name} | {median(runs, 'first'):.0f} ms | "
                     f"{median(runs, 'result'):.0f} ms | {median(runs, 'rss'):.1f} MB |")
    base = samples["anthropic"]
    for name, runs in samples.items():
        if name == "anthropic":
            continue
        ratios = [f"{median(runs, k) / median(base, k):.2f}"
                  for k in ("first", "result", "rss")]
        lines.append(f"| {name} ÷ anthropic | {ratios[0]} | {ratios[1]} | {ratios[2]} |")
    lines.append("")
    lines.append(json.dumps(samples))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
