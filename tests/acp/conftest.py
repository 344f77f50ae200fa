"""The two ways an editor reaches wisp over ACP, as one fixture: `wisp acp` itself, and
Zed's adapter (`@zed-industries/claude-agent-acp`) running `wisp` through
`CLAUDE_CODE_EXECUTABLE`. Both are real processes; the model is the scripted server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.acp.editor import ADAPTER_JS, adapter_command
from tests.conftest import base_env
from tests.sdk.conftest import wisp_executable
from wisp.testing import ScriptedServer


class Agent:
    """How to start one agent, and where its user lives."""

    def __init__(self, kind: str, command: list[str], env: dict[str, str], cwd: Path,
                 home: Path) -> None:
        self.kind = kind
        self.command = command
        self.env = env
        self.cwd = cwd
        self.home = home


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    if not ADAPTER_JS.exists():
        pytest.skip("Zed's ACP adapter is not installed (bash scripts/install-sdk-deps)")
    return node


@pytest.fixture(params=["native", "adapter"])
def agent(request: pytest.FixtureRequest, server: ScriptedServer, tmp_path: Path) -> Agent:
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    env = base_env(server, home)
    cli = wisp_executable(tmp_path)
    if request.param == "native":
        return Agent("native", [cli, "acp"], env, cwd, home)
    env["CLAUDE_CODE_EXECUTABLE"] = cli
    # The adapter reads transcripts itself (session/load) where the SDK looks for them.
    env["CLAUDE_CONFIG_DIR"] = env["WISP_CONFIG_DIR"]
    return Agent("adapter", adapter_command(_node()), env, cwd, home)


@pytest.fixture
def native(server: ScriptedServer, tmp_path: Path) -> Agent:
    """`wisp acp` alone, for what Zed's adapter does not offer."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    return Agent("native", [wisp_executable(tmp_path), "acp"], base_env(server, home), cwd,
                 home)
