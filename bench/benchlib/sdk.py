"""Runs `bench/sdk_driver.py` for one CLI and turns its JSON into a RunResult."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchlib.clis import PYC_WARM, Cli
from benchlib.model import Ctx, RunResult
from benchlib.proc import BenchError

DRIVER = Path(__file__).resolve().parents[1] / "sdk_driver.py"


def available() -> str | None:
    """The installed SDK version, or None when `claude_agent_sdk` cannot be imported."""
    try:
        from importlib.metadata import version

        return version("claude-agent-sdk")
    except Exception:
        return None


def overhead(cli: Cli, ctx: Ctx) -> RunResult:
    queries, turns = (1, 2) if ctx.quick else (3, 10)
    out = _drive(cli, ctx, "overhead", "--queries", str(queries), "--turns", str(turns))
    # connect() may return before the CLI has started; the first turn pays for the rest,
    # so connect + turn 1 is reported as one figure and the later turns as the steady state.
    turns = out["client_turn"]
    steady = turns[1:] or turns
    return RunResult({
        "query": statistics.median(out["query"]),
        "connect": out["connect"] + turns[0],
        "client_turn": statistics.median(steady),
    })


def bigout(cli: Cli, ctx: Ctx) -> RunResult:
    out = _drive(cli, ctx, "bigout", bypass=True)
    chars = out["chars"]
    note = (
        f"Python SDK: {out['outcome']}; tool_result sizes received: {chars or 'none'} chars"
    )
    return RunResult({"sdk_wall": out["wall"], "sdk_chars": float(sum(chars))}, {"sdk": note})


def _drive(cli: Cli, ctx: Ctx, mode: str, *extra: str, bypass: bool = False) -> dict[str, Any]:
    env = cli.env(ctx.base_url, bypass=bypass)
    # The driver's own imports use the warm cache; for wisp, env already says the same.
    env.setdefault("PYTHONPYCACHEPREFIX", str(PYC_WARM))
    argv = [sys.executable, str(DRIVER), mode, "--cli", str(cli.path), "--cwd", str(ctx.work)]
    proc = subprocess.run(
        [*argv, *extra], env=env, cwd=ctx.work, capture_output=True, text=True, check=False,
        timeout=400,
    )
    if proc.returncode != 0:
        raise BenchError(f"sdk driver failed ({proc.returncode}): {proc.stderr[-800:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result
