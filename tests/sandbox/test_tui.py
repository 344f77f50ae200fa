"""The sandbox in the terminal UI: the model's commands run inside it, `/status` says
which mechanism is in force, and a command the user types with `!` stays outside."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox import generated
from tests.sandbox.conftest import sandbox_settings
from tests.tui.harness import TuiSetup, tui_setup
from wisp.testing import reply

pytestmark = pytest.mark.usefixtures("bwrap")


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[TuiSetup]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    with tui_setup(tmp_path) as setup:
        yield setup


def test_model_commands_are_sandboxed_and_bang_commands_are_not(tui, tmp_path):
    boxed, typed = tmp_path / "boxed.txt", tmp_path / "typed.txt"
    tui.server.script(reply.tool_use("Bash", {"command": generated.write("python", str(boxed),
                                                                          "x")}),
                      reply.text("tried it"))
    term = tui.terminal("--settings", sandbox_settings())
    term.ready(timeout=20)
    term.submit("go")
    term.wait_for("tried it", timeout=20)
    term.ready()
    assert not boxed.exists()
    term.submit("/status")
    term.wait_for(r"Sandbox:\s+on: bubblewrap")
    term.ready()
    term.submit(f"!touch {typed}")
    deadline = time.monotonic() + 10
    while not typed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert typed.exists()  # the user's own command: outside the sandbox
