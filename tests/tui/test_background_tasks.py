"""Background tasks in tmux: the footer counts them, the end of one is shown and wakes a
turn of its own, and the /tasks panel (Ctrl+T) shows their output and stops them."""

from __future__ import annotations

import subprocess
import time
import uuid

from tests.tui.harness import Terminal, TuiSetup, wait_requests
from wisp.testing import reply


def started(tui: TuiSetup) -> Terminal:
    term = tui.terminal("--allowedTools", "Bash")
    term.ready(timeout=20)
    term.wait_for("default mode")
    return term


def test_a_finished_background_command_is_shown_and_wakes_a_turn(tui: TuiSetup) -> None:
    tui.server.script(
        reply.tool_use("Bash", {"command": "sleep 1.5; echo bg-finished",
                                "description": "slow job", "run_in_background": True}),
        reply.text("started it"),
        reply.text("I read the notice"))
    term = started(tui)
    term.submit("start the job")
    term.wait_for("started it")
    term.wait_for(r"1 background task \(ctrl\+t\)")
    term.wait_for("Background task completed", timeout=15)
    term.wait_for("I read the notice", timeout=15)  # the woken turn ran in the UI
    requests = wait_requests(tui, 3)
    assert "slow job" in str(requests[2].body)  # its prompt is the task's notice
    term.wait_gone("background task \\(")


def test_the_tasks_panel_shows_output_and_stops_a_task(tui: TuiSetup) -> None:
    seconds = f"40.{uuid.uuid4().int % 10**6:06d}"
    tui.server.script(
        reply.tool_use("Bash", {"command": f"echo panel-output; sleep {seconds}",
                                "description": "endless job", "run_in_background": True}),
        reply.text("left it running"))
    term = started(tui)
    term.submit("start it")
    term.wait_for("left it running")
    term.ready()
    term.keys("C-t")
    screen = term.wait_for("Background tasks")
    assert "endless job · command · running" in screen
    term.keys("1")
    screen = term.wait_for("Stop it")
    assert "panel-output" in screen
    term.keys("1")
    term.wait_for("Stopped endless job")
    deadline = time.monotonic() + 5
    while subprocess.run(["pgrep", "-f", f"sleep {seconds}"], capture_output=True,
                         check=False).returncode == 0:
        assert time.monotonic() < deadline, "the stopped task's process still runs"
        time.sleep(0.05)
    term.wait_gone("background task \\(")
