"""Fixtures for wisp.sdk's own tests: a working folder, an environment pointing at the
scripted server, and options for each transport (`make_options`, parametrized)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# `work` is the official SDK tests' working-folder fixture, shared (imported to register it).
from tests.sdk.conftest import sdk_env, wisp_executable, work
from wisp.sdk import ClaudeAgentOptions
from wisp.testing import ScriptedServer

TRANSPORTS = ["inprocess", "subprocess"]
__all__ = ["env", "make_options", "work"]


@pytest.fixture
def env(server: ScriptedServer, tmp_path: Path) -> dict[str, str]:
    """The official SDK tests' environment, plus IS_SANDBOX for bypassPermissions as root."""
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


