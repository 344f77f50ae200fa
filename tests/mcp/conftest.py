"""Fixture MCP servers as `--mcp-config` JSON, and a check that their processes are gone."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

from tests.duplex.conftest import duplex  # noqa: F401  (the fixture, shared with tests/duplex)

HERE = Path(__file__).resolve().parent
CALC = HERE / "calc_server.py"
RAW = HERE / "raw_server.py"

# find_spec locates the package without paying for its import in the test process.
needs_mcp = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None,
    reason="the `mcp` package is not installed (it comes with claude-agent-sdk: "
    "pip install -e '.[sdk]')",
)


def mcp_config(**servers: dict) -> str:
    return json.dumps({"mcpServers": servers})


def calc_entry(pid_file: Path) -> dict:
    return {"command": sys.executable, "args": [str(CALC)],
            "env": {"CALC_PID_FILE": str(pid_file)}}


def raw_entry(pid_file: Path, mode: str = "serve") -> dict:
    return {"type": "stdio", "command": sys.executable, "args": [str(RAW), mode],
            "env": {"RAW_PID_FILE": str(pid_file)}}


def pids(pid_file: Path) -> list[int]:
    if not pid_file.exists():
        return []
    return [int(line) for line in pid_file.read_text().split()]


def pid_alive(pid: int) -> bool:
    """A zombie counts as gone: it is dead, only not yet reaped by whoever inherited it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether `pid` is dead within `timeout`. SIGKILL is delivered asynchronously, so
    this polls against a deadline instead of asserting at once."""
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def pid_file(tmp_path: Path) -> Path:
    return tmp_path / "server.pids"
