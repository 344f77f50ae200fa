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
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.proc import BenchError, spawn
from benchlib.provenance import git_head, log

ROOT = Path(__file__).resolve().parents[1]
STREAM = ("-p", "hi", "--output-format", "stream-json", "--verbose")


def _server() -> tuple[subprocess.Popen[str], str]:
    code = ("import sys, time\n"
            "from wisp.testing import ScriptedServer, reply\n"
            "s = ScriptedServer(default=reply.text('hello from the bench server'))\n"
            "print(s.url, flush=True)\n"
            "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _env(url: str, home: Path, src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "WISP_", "CLAUDE_"))}
    env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-bench",
                "OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-bench",
                "HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp"),
                "PYTHONPATH": str(src)})
    return env


def _one(argv: list[str], env: dict[str, str], work: Path) -> dict[str, float]:
    child = spawn(argv, env, work)
    first = child.next_line(60)
    if first is None or first.kind != "system/init":
        raise BenchError(f"first frame is not system/init: {first}; {child.stderr_tail()}")
    result = child.wait_for(lambda ln: ln.kind == "result", 60)
    assert result.frame is not None
    if result.frame.get("is_error"):
        raise BenchError(f"error result: {str(result.frame)[:300]}")
    done = child.finish()
    return {"first": first.t * 1000, "result": result.t * 1000, "rss": done.maxrss_mb}


def _worktree(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "src" / "wisp")],
                   check=True)
    return into / "src"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--base", help="also run the Anthropic path of this git revision")
    args = parser.parse_args()
    server, url = _server()
    samples: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "work").mkdir()
        (tmpdir / "home").mkdir()
        here = ROOT / "src"
        variants = {"anthropic": (here, []), "openai": (here, ["--model", "openai:gpt-bench"])}
        if args.base:
            variants["anthropic@base"] = (_worktree(args.base, tmpdir / "base"), [])
        try:
            for rep in range(args.n + 1):  # the first round warms caches and is dropped
                for name, (src, extra) in variants.items():
                    argv = [sys.executable, "-m", "wisp", *STREAM, *extra]
                    run = _one(argv, _env(url, tmpdir / "home", src), tmpdir / "work")
                    if rep:
                        samples.setdefault(name, []).append(run)
                log(f"round {rep}/{args.n}")
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait()
            if args.base:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tmpdir / "base")], check=False, capture_output=True)
    print(_table(samples, args))
    return 0


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _table(samples: dict[str, list[dict[str, float]]], args: argparse.Namespace) -> str:
    lines = [f"wisp {git_head()}; n={args.n}; medians; 2 CPUs, load "
             f"{os.getloadavg()[0]:.2f}", "",
             "| path | first frame | result | peak RSS |", "|---|---|---|---|"]
    for name, runs in samples.items():
        lines.append(f"| {name} | {_median(runs, 'first'):.0f} ms | "
                     f"{_median(runs, 'result'):.0f} ms | {_median(runs, 'rss'):.1f} MB |")
    base = samples["anthropic"]
    for name, runs in samples.items():
        if name == "anthropic":
            continue
        ratios = [f"{_median(runs, k) / _median(base, k):.2f}"
                  for k in ("first", "result", "rss")]
        lines.append(f"| {name} ÷ anthropic | {ratios[0]} | {ratios[1]} | {ratios[2]} |")
    lines.append("")
    lines.append(json.dumps(samples))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
