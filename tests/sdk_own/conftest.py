"""Fixtures for wisp.sdk's own tests: a working folder, an environment pointing at the
scripted server, and options for each transport (`make_options`, parametrized)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import sdk_env, wisp_executable
from wisp.sdk import ClaudeAgentOptions
from wisp.testing import ScriptedServer

TRANSPORTS = ["inprocess", "subprocess"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def env(server: ScriptedServer, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {**sdk_env(server, home), "IS_SANDBOX": "1"}


@pytest.fixture(params=TRANSPORTS)
def make_options(request: pytest.FixtureRequest, tmp_path: Path, work: Path,
                 env: dict[str, str]) -> Any:
    cli = wisp_executable(tmp_path) if request.param == "subprocess" else None

    def make(**kwargs: Any) -> ClaudeAgentOptions:
        kwargs.setdefault("cwd", str(work))
        kwargs["env"] = {**env, **kwargs.get("env", {})}
        return ClaudeAgentOptions(cli_path=cli, **kwargs)

    return make


