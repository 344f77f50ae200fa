"""SIGINT/SIGTERM end a run cleanly: a result, and no surviving tool processes."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from wisp.testing import reply


def wait_for(predicate, timeout=15.0, interval=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def _lines_until(proc, text: str, timeout: float) -> list[str]:
    """stdout lines of `proc` up to the first holding `text`, read by a thread so the
    deadline holds even when nothing comes."""
    found: list[str] = []
    done = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            found.append(line)
            if text in line:
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(timeout) and found and text in found[-1], (
        f"no {text} within {timeout} s: {found}")
    return found


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_sigint_during_streaming_gives_an_aborted_result(wisp, server):
    server.script(reply.slow("slow hello from a very slow model", delay_per_event=0.3))
    proc = wisp.spawn("-p", "x", "--output-format", "stream-json", "--verbose",
                 "--include-partial-messages")
    # The interrupt lands mid-message: after the first text delta has been printed (read
    # with a deadline), so the open message it must close really exists.
    early = _lines_until(proc, '"content_block_delta"', timeout=30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    frames = [json.loads(line) for line in [*early, *out.splitlines()] if line.startswith("{")]
    result = frames[-1]
    assert result["type"] == "result"
    assert result["subtype"] == "error_during_execution"
    assert result["is_error"] is True
    assert proc.returncode == 1
    # Every stream_event message that started was closed before the result.
    events = [f["event"]["type"] for f in frames if f["type"] == "stream_event"]
    assert events.count("message_start") >= 1
    assert events.count("message_start") == events.count("message_stop")
    assert "Traceback" not in err


def test_sigterm_during_a_tool_kills_its_process_group(wisp, server, tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    command = f"sleep 300 & echo $! > {pidfile}; wait"
    server.script(reply.tool_use("Bash", {"command": command}), reply.text("never"))
    proc = wisp.spawn("-p", "x", "--output-format", "stream-json", "--verbose",
                 "--permission-mode", "bypassPermissions", env={"IS_SANDBOX": "1"})
    assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    grandchild = int(pidfile.read_text())
    assert pid_alive(grandchild)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=15)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["subtype"] == "error_during_execution"
    assert wait_for(lambda: not pid_alive(grandchild), timeout=5)
    assert os.path.exists(pidfile)


def test_background_jobs_a_tool_detached_end_when_wisp_exits(wisp, server, tmp_path):
    pidfile = tmp_path / "bg.pid"
    command = f"nohup sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}"
    server.script(reply.tool_use("Bash", {"command": command}), reply.text("started it"))
    run = wisp("-p", "x", "--permission-mode", "bypassPermissions", env={"IS_SANDBOX": "1"})
    assert run.returncode == 0, run.stderr
    background = int(pidfile.read_text())
    assert wait_for(lambda: not pid_alive(background), timeout=5)


def test_duplex_exit_ends_detached_background_jobs(wisp, server, tmp_path):
    pidfile = tmp_path / "bg2.pid"
    command = f"setsid sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}"
    server.script(reply.tool_use("Bash", {"command": command}), reply.text("ok"))
    frame = {"type": "user", "message": {"role": "user", "content": "go"},
             "parent_tool_use_id": None, "session_id": ""}
    run = wisp("--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
               "--permission-mode", "bypassPermissions", input=json.dumps(frame) + "\n",
               env={"IS_SANDBOX": "1"})
    assert run.returncode == 0, run.stderr
    background = int(pidfile.read_text())
    assert wait_for(lambda: not pid_alive(background), timeout=5)


def test_a_signal_before_the_run_has_started_exits_at_once(wisp, tmp_path):
    """While MCP servers connect there is no run to end with a result: SIGINT ends wisp
    (130) and the server it started, however long the server would have kept it."""
    marker = tmp_path / "server-started"
    hanging = {"mcpServers": {"hang": {"command": sys.executable, "args": [
        "-c", f"import pathlib, os, time; pathlib.Path({str(marker)!r}).write_text("
              "str(os.getpid())); time.sleep(600)"]}}}
    proc = wisp.spawn("-p", "x", "--output-format", "stream-json", "--verbose",
                      "--mcp-config", json.dumps(hanging))
    assert wait_for(lambda: marker.exists() and marker.read_text()), "the MCP server never ran"
    server_pid = int(marker.read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert wait_for(lambda: not pid_alive(server_pid)), "the MCP server outlived wisp"
