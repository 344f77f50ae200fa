"""Shared by the SDK conformance tests: the `wisp` executable the SDKs spawn, and an
environment that points it at the scripted Messages API server."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import base_env
from wisp.testing import ScriptedServer


def wisp_executable(tmp_path: Path) -> str:
    """The console script next to this interpreter (what a user passes as `cli_path`), or
    a shim running this interpreter when wisp isn't installed as a script."""
    found = shutil.which("wisp", path=str(Path(sys.executable).parent))
    if found is not None:
        return found
    shim = tmp_path / "wisp"
    shim.write_text(
        f"#!{sys.executable}\nfrom wisp.cli.main import main\nraise SystemExit(main())\n"
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return str(shim)


def sdk_env(server: ScriptedServer, home: Path) -> dict[str, str]:
    """What the SDK passes to wisp. The Python SDK merges this over its own environment,
    so inherited ANTHROPIC_* settings are blanked rather than dropped."""
    env = base_env(server, home)
    for key in os.environ:
        if key.startswith("ANTHROPIC_") and key not in env:
            env[key] = ""
    return env


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def env(server: ScriptedServer, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return sdk_env(server, home)


@pytest.fixture
def cli(tmp_path: Path) -> str:
    return wisp_executable(tmp_path)
