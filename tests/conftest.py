"""Shared fixtures: a scripted Messages API server and a way to run the real `wisp` binary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.frame_check import check_frame
from tests.needs import ripgrep_or_skip
from wisp.settings.trust import record
from wisp.testing import ScriptedServer

JSON = dict[str, Any]


@dataclass
class WispRun:
    returncode: int
    stdout: str
    stderr: str
    frames: list[JSON] = field(default_factory=list)

    def of_type(self, kind: str, subtype: str | None = None) -> list[JSON]:
        return [f for f in self.frames if f.get("type") == kind
                and (subtype is None or f.get("subtype") == subtype)]

    @property
    def result(self) -> JSON:
        results = self.of_type("result")
        assert len(results) == 1, f"expected one result, got {self.frames}"
        return results[0]

    def kinds(self) -> list[str]:
        return [f["type"] if f["type"] not in ("system",) else f"system/{f['subtype']}"
                for f in self.frames]


def wisp_command() -> list[str]:
    return [sys.executable, "-m", "wisp"]


def base_env(server: ScriptedServer, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_"))}
    env.update({
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-test",
        "HOME": str(home),
        "WISP_CONFIG_DIR": str(home / ".wisp"),
        "WISP_RETRY_BASE_DELAY_MS": "10",
        "CLAUDE_CODE_MAX_RETRIES": "3",
    })
    return env


class Runner:
    def __init__(self, server: ScriptedServer, tmp_path: Path) -> None:
        self.server = server
        self.cwd = tmp_path / "work"
        self.cwd.mkdir(exist_ok=True)
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.env = base_env(server, self.home)

    def trust(self) -> None:
        """Records that the user trusts the project folder, as answering Yes to the trust
        dialog does: its settings' grants (allow rules, hooks, env, MCP servers) apply
        from then on. Without it they are held back (`wisp.settings.untrusted`)."""
        record(self.cwd, self.env, hasTrustDialogAccepted=True)

    def spawn(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Starts wisp in the background (stdin closed, text pipes) for signal/kill tests."""
        return subprocess.Popen(
            [*wisp_command(), *args], cwd=self.cwd, env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __call__(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
                 timeout: float = 60) -> WispRun:
        proc = subprocess.run(
            [*wisp_command(), *args], cwd=self.cwd, env={**self.env, **(env or {})},
            input=input if input is not None else "", capture_output=True, text=True,
            timeout=timeout, check=False)
        frames = []
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                frame = json.loads(line)
                check_frame(frame)
                frames.append(frame)
        return WispRun(proc.returncode, proc.stdout, proc.stderr, frames)


@pytest.fixture
def rg() -> str:
    """ripgrep's path; skips without it (fails under WISP_REQUIRE_RIPGREP=1)."""
    return ripgrep_or_skip()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def wisp(server: ScriptedServer, tmp_path: Path) -> Runner:
    return Runner(server, tmp_path)
