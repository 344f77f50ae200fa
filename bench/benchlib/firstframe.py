"""Shared by the side-by-side first-frame benches (`openai_path.py`, `project_context.py`):
a scripted model server in its own process, an isolated environment, one timed `wisp -p`
run, and an older revision checked out in a temporary worktree."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchlib.proc import BenchError, spawn

ROOT = Path(__file__).resolve().parents[2]


def start_server() -> tuple[subprocess.Popen[str], str]:
    code = ("import sys, time\n"
            "from wisp.testing import ScriptedServer, reply\n"
            "s = ScriptedServer(default=reply.text('hello from the bench server'))\n"
            "print(s.url, flush=True)\n"
            "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def isolated_env(url: str, home: Path, src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "WISP_", "CLAUDE_"))}
    env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-bench",
                "OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-bench",
                "HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp"),
                "PYTHONPATH": str(src)})
    return env


def one_run(argv: list[str], env: dict[str, str], work: Path) -> dict[str, float]:
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


def worktree(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "src" / "wisp")],
                   check=True)
    return into / "src"


def remove_worktree(path: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                   check=False, capture_output=True)


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)
