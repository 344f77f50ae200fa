"""Permission modes in -p: denials are reported and the run goes on."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import base_env, wisp_command
from tests.privileges import IS_ROOT, NOBODY, open_folder, setpriv_argv
from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}  # CI runs as root, where bypass needs IS_SANDBOX=1


def write_then_done(path):
    return (reply.tool_use("Write", {"file_path": str(path), "content": "written\n"}),
            reply.text("done"))


def test_write_in_default_mode_is_denied_and_reported(wisp, server):
    target = wisp.cwd / "w.txt"
    server.script(*write_then_done(target))
    run = wisp("-p", "write", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    assert not target.exists()
    denied = run.of_type("system", "permission_denied")
    assert len(denied) == 1 and denied[0]["tool_name"] == "Write"
    tool_result = run.of_type("user")[0]["message"]["content"][0]
    assert tool_result["is_error"] is True
    assert run.result["permission_denials"] == [{
        "tool_name": "Write", "tool_use_id": denied[0]["tool_use_id"],
        "tool_input": {"file_path": str(target), "content": "written\n"}}]
    assert run.result["is_error"] is False


def test_read_only_bash_runs_in_default_mode(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.of_type("user")[0]["message"]["content"][0]["is_error"] is False
    assert run.result["permission_denials"] == []


def test_bash_round_trip_writes_a_file_in_bypass_mode(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo made > made.txt"}), reply.text("ok"))
    run = wisp("-p", "x", "--permission-mode", "bypassPermissions", "--output-format", "json",
               env=SANDBOX)
    assert run.returncode == 0
    assert (wisp.cwd / "made.txt").read_text() == "made\n"


@pytest.mark.skipif(not IS_ROOT, reason="the refusal is root's; the non-root side is below")
def test_bypass_as_root_needs_is_sandbox(wisp, server):
    run = wisp("-p", "x", "--dangerously-skip-permissions")
    assert run.returncode == 1
    assert "cannot be used with root/sudo privileges" in run.stderr
    assert server.requests == []


def test_bypass_without_root_needs_no_is_sandbox(server):
    """The same flag for an ordinary user, without IS_SANDBOX: the run goes ahead. Under
    root (CI) wisp runs as nobody through setpriv, in a folder nobody owns."""
    server.script(reply.tool_use("Bash", {"command": "echo made > made.txt"}), reply.text("ok"))
    with open_folder() as root:
        cwd, home = root / "work", root / "home"
        for folder in (root, cwd, home):
            folder.mkdir(exist_ok=True)
            if IS_ROOT:
                os.chown(folder, NOBODY.pw_uid, NOBODY.pw_gid)
        env = {k: v for k, v in base_env(server, home).items() if k != "IS_SANDBOX"}
        run = subprocess.run(
            [*setpriv_argv(), *wisp_command(), "-p", "x", "--dangerously-skip-permissions",
             "--output-format", "json"],
            cwd=cwd, env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
        assert run.returncode == 0, run.stderr
        assert (cwd / "made.txt").read_text() == "made\n"


def test_accept_edits_allows_writes_inside_cwd_only(wisp, server, tmp_path):
    inside = wisp.cwd / "in.txt"
    outside = tmp_path / "out.txt"
    server.script(*write_then_done(inside), *write_then_done(outside))
    assert wisp("-p", "x", "--permission-mode", "acceptEdits").returncode == 0
    assert inside.exists()
    wisp("-p", "x", "--permission-mode", "acceptEdits")
    assert not outside.exists()


def test_plan_mode_denies_writes(wisp, server):
    target = wisp.cwd / "pm.txt"
    server.script(*write_then_done(target))
    run = wisp("-p", "x", "--permission-mode", "plan", "--output-format", "json")
    assert run.returncode == 0
    assert not target.exists()
    assert json.loads(run.stdout)["permission_denials"][0]["tool_name"] == "Write"


def test_allowed_tools_allows_what_it_names(wisp, server):
    target = wisp.cwd / "a.txt"
    server.script(*write_then_done(target))
    assert wisp("-p", "x", "--allowedTools", "Write").returncode == 0
    assert target.read_text() == "written\n"


def test_allowed_bash_prefix_rule_does_not_cover_chained_commands(wisp, server):
    victim = wisp.cwd / "victim.txt"
    victim.write_text("keep")
    server.script(reply.tool_use("Bash", {"command": f"git status; rm {victim}"}),
                  reply.text("ok"))
    run = wisp("-p", "x", "--allowedTools", "Bash(git status:*)", "--output-format", "json")
    assert victim.exists()
    assert json.loads(run.stdout)["permission_denials"][0]["tool_name"] == "Bash"


def test_dont_ask_denies(wisp, server):
    target = wisp.cwd / "d.txt"
    server.script(*write_then_done(target))
    run = wisp("-p", "x", "--permission-mode", "dontAsk", "--output-format", "json")
    assert not target.exists()
    assert json.loads(run.stdout)["permission_denials"]
