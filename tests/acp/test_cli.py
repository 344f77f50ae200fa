"""`wisp acp` as a command: listed by `wisp --help`, its own `--help`, a refused argument,
and a start-up that answers `initialize` without loading the engine (the editor waits on
that answer before it shows the agent)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.sdk.conftest import wisp_executable


def test_help_lists_acp(tmp_path: Path) -> None:
    out = subprocess.run([wisp_executable(tmp_path), "--help"], capture_output=True,
                         text=True, check=True, timeout=30).stdout
    assert "wisp acp" in out and "Agent Client Protocol" in out


def test_acp_help_and_a_bad_argument(tmp_path: Path) -> None:
    cli = wisp_executable(tmp_path)
    shown = subprocess.run([cli, "acp", "--help"], capture_output=True, text=True,
                           timeout=30, check=False)
    assert shown.returncode == 0 and "Usage: wisp acp" in shown.stdout
    bad = subprocess.run([cli, "acp", "--frobnicate"], capture_output=True, text=True,
                         timeout=30, check=False)
    assert bad.returncode == 1 and "--frobnicate" in bad.stderr


def test_initialize_is_answered_before_the_engine_loads() -> None:
    code = (
        "import asyncio, json, sys\n"
        "from wisp.acp.agent import AcpAgent\n"
        "answer = asyncio.run(AcpAgent({}).handle('initialize', {'protocolVersion': 1}))\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('wisp.runtime', "
        "'wisp.engine', 'wisp.models', 'wisp.tools', 'wisp.mcp', 'anthropic', 'pydantic')))\n"
        "print(json.dumps({'answer': answer, 'heavy': heavy}))\n")
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True, timeout=30).stdout)
    assert out["heavy"] == []
    caps = out["answer"]["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"]["image"] and caps["promptCapabilities"]["embeddedContext"]
    assert caps["mcpCapabilities"] == {"http": True, "sse": True}


def test_initialize_answer_comes_quickly(tmp_path: Path) -> None:
    """Not a benchmark (bench/editor_acp.py is): a generous bound that still catches the
    engine or a provider being loaded before the answer (that costs seconds here)."""
    proc = subprocess.Popen([wisp_executable(tmp_path), "acp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    started = time.monotonic()
    try:
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize",'
                         b'"params":{"protocolVersion":1}}\n')
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        elapsed = time.monotonic() - started
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
    assert elapsed < 2.0
    assert proc.returncode == 0
