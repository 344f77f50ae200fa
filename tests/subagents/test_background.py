"""Background work's edges in wisp itself: a signal ends the process and every background
command's process tree, a command past its time limit is stopped and reported failed, and
inside a subagent `run_in_background` runs the command to completion instead."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.subagents.reference import LONG
from wisp.testing import reply


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def _wait(found: Path | None = None, pid: int | None = None, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found is not None and found.exists() and found.read_text().strip():
            return
        if pid is not None and not _alive(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {found or pid}")


def test_a_signal_ends_wisp_and_its_background_commands(wisp, server):
    server.script(
        reply.tool_use("Bash", {"command": f"{LONG} & echo $! > child.pid; wait",
                                "run_in_background": True}),
        reply.text("started it"))
    proc = wisp.spawn("-p", "x", "--allowedTools", "Bash")
    pid_file = wisp.cwd / "child.pid"
    _wait(found=pid_file)
    child = int(pid_file.read_text())
    # wisp's turn is over (the model was asked again, after the command went to the
    # background) and it is now waiting for the command.
    deadline = time.monotonic() + 15
    while len(server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(server.requests) == 2, server.requests
    assert proc.poll() is None and _alive(child)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    _wait(pid=child)
    assert not _alive(child)


def test_a_background_command_past_its_time_limit_fails(wisp, server):
    server.script(
        reply.tool_use("Bash", {"command": f"echo begun; {LONG}", "description": "slow one",
                                "run_in_background": True, "timeout": 500}),
        reply.text("started it"), reply.text("it timed out"))
    started = time.monotonic()
    run = wisp("-p", "x", "--allowedTools", "Bash", "--output-format", "stream-json",
               "--verbose")
    assert time.monotonic() - started < 15
    [note] = run.of_type("system", "task_notification")
    assert note["status"] == "failed"
    assert note["summary"] == ('Background command "slow one" timed out after 0.5s and was '
                               "stopped")
    assert Path(note["output_file"]).read_text() == "begun\n\n[timed out after 0.5s]\n"
    assert [r["result"] for r in run.of_type("result")] == ["started it", "it timed out"]


def test_inside_a_subagent_a_background_command_runs_to_completion(wisp, server):
    server.script(
        reply.tool_use("Task", {"description": "d", "prompt": "p"}),
        reply.tool_use("Bash", {"command": "echo done-here", "run_in_background": True}),
        reply.text("sub done"), reply.text("all done"))
    run = wisp("-p", "x", "--allowedTools", "Bash", "--output-format", "stream-json",
               "--verbose")
    assert run.returncode == 0, run.stderr
    result = server.requests[2].body["messages"][-1]["content"][0]
    assert result["content"].startswith("done-here")
    assert "ran to completion" in result["content"]
    assert [f["task_type"] for f in run.of_type("system", "task_started")] == ["local_agent"]
