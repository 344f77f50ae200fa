"""bypassPermissions needs a launch flag: `--dangerously-skip-permissions` (start in it),
`--allow-dangerously-skip-permissions` (may switch to it later) or `--permission-mode
bypassPermissions`. Without one, no control request, permission answer or settings file
can turn permission checks off."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import Runner
from tests.duplex.harness import Duplex
from tests.privileges import IS_ROOT, NOBODY, open_folder, setpriv_argv
from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}  # tests run as root here, where bypass also needs IS_SANDBOX=1
ALLOW = "--allow-dangerously-skip-permissions"
NOT_LAUNCHED = (
    "Cannot set permission mode to bypassPermissions: the session was not launched with "
    "--dangerously-skip-permissions or --allow-dangerously-skip-permissions."
)


def write_reply(path):
    return reply.tool_use("Write", {"file_path": str(path), "content": "x\n"})


def mode_of(proc) -> str:
    return str(proc.call("get_settings")["response"]["effective"]["permissionMode"])


def test_switching_to_bypass_is_refused_unless_launched_with_a_flag(duplex):
    proc = duplex(env=SANDBOX)
    proc.initialize()
    response = proc.call("set_permission_mode", mode="bypassPermissions")
    assert response["subtype"] == "error"
    assert response["error"] == NOT_LAUNCHED
    assert response["error_code"] == "bypass_not_launched"
    assert mode_of(proc) == "default"
    assert not proc.of("system", "status")  # no change was announced
    assert proc.finish() == 0


def test_apply_flag_settings_cannot_switch_to_bypass_either(duplex):
    proc = duplex(env=SANDBOX)
    response = proc.call("apply_flag_settings", settings={"permissionMode": "bypassPermissions"})
    assert response["subtype"] == "error"
    assert response["error_code"] == "bypass_not_launched"
    assert mode_of(proc) == "default"
    assert proc.finish() == 0


def test_allow_flag_permits_the_switch_without_starting_in_bypass(duplex, server, wisp):
    target = wisp.cwd / "bypassed.txt"
    server.script(write_reply(target), reply.text("done"))
    proc = duplex(ALLOW, env=SANDBOX)
    assert proc.initialize()["response"]["current_permission_mode"] == "default"
    response = proc.call("set_permission_mode", mode="bypassPermissions")
    assert response["subtype"] == "success", response
    assert response["response"] == {"mode": "bypassPermissions"}
    assert proc.wait_frame("system", "status")["permissionMode"] == "bypassPermissions"
    proc.user("write it")
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert target.read_text() == "x\n"  # ran without any permission prompt


@pytest.mark.parametrize("launch", [("--dangerously-skip-permissions",),
                                    ("--permission-mode", "bypassPermissions")])
def test_launching_in_bypass_counts_as_allowed(duplex, launch):
    proc = duplex(*launch, env=SANDBOX)
    assert proc.call("set_permission_mode", mode="default")["subtype"] == "success"
    back = proc.call("set_permission_mode", mode="bypassPermissions")
    assert back["subtype"] == "success", back
    assert mode_of(proc) == "bypassPermissions"
    assert proc.finish() == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="the root check only applies to root")
def test_as_root_the_allow_flag_still_needs_is_sandbox(duplex, wisp):
    env = {k: v for k, v in wisp.env.items() if k != "IS_SANDBOX"}
    wisp.env = env
    proc = duplex(ALLOW)
    response = proc.call("set_permission_mode", mode="bypassPermissions")
    assert response["subtype"] == "error"
    assert response["error_code"] == "invalid_mode"
    assert "root/sudo" in response["error"]
    assert proc.finish() == 0


def test_without_root_the_allow_flag_needs_no_is_sandbox(server):
    """The other side of the check above: for an ordinary user the launch flag alone opens
    bypass. Under root (as CI runs) wisp runs as nobody through setpriv, in a folder
    nobody owns."""
    with open_folder() as root:
        runner = Runner(server, root)
        if IS_ROOT:
            for folder in (runner.cwd, runner.home):
                os.chown(folder, NOBODY.pw_uid, NOBODY.pw_gid)
        runner.env = {k: v for k, v in runner.env.items() if k != "IS_SANDBOX"}
        proc = Duplex(runner, ALLOW, prefix=tuple(setpriv_argv()))
        try:
            response = proc.call("set_permission_mode", mode="bypassPermissions")
            assert response["subtype"] == "success", (response, proc.stderr)
            assert mode_of(proc) == "bypassPermissions"
            assert proc.finish() == 0
        finally:
            proc.kill()


def test_a_permission_answer_cannot_set_bypass_either(duplex, server, wisp):
    server.script(write_reply(wisp.cwd / "a.txt"), reply.text("one"))
    proc = duplex("--permission-prompt-tool", "stdio", env=SANDBOX)
    proc.user("write")
    ask = proc.wait_request("can_use_tool")
    proc.answer(ask, {
        "behavior": "allow",
        "updatedInput": ask["request"]["input"],
        "updatedPermissions": [
            {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}],
    })
    proc.wait_frame("result")
    assert mode_of(proc) == "default"
    assert proc.finish() == 0


def _project_bypass(wisp) -> None:
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    # Trusted: an untrusted folder's widening mode is held back before any of this.
    wisp.trust()


def test_a_repository_settings_file_cannot_start_the_session_in_bypass(duplex, server, wisp):
    _project_bypass(wisp)
    target = wisp.cwd / "shipped.txt"
    server.script(write_reply(target), reply.text("done"))
    proc = duplex(env=SANDBOX)
    assert proc.initialize()["response"]["current_permission_mode"] == "default"
    proc.user("write it")
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert proc.of("system", "init")[0]["permissionMode"] == "default"
    assert not target.exists()
    assert "ignoring permissions.defaultMode bypassPermissions" in proc.stderr


def test_settings_bypass_applies_when_the_launch_allows_it(duplex, wisp):
    _project_bypass(wisp)
    proc = duplex(ALLOW, env=SANDBOX)
    assert proc.initialize()["response"]["current_permission_mode"] == "bypassPermissions"
    assert proc.finish() == 0
    assert "ignoring" not in proc.stderr


def test_print_mode_ignores_settings_bypass_too(wisp, server):
    _project_bypass(wisp)
    target = wisp.cwd / "printed.txt"
    server.script(write_reply(target), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose", env=SANDBOX)
    assert run.returncode == 0, run.stderr
    assert run.of_type("system", "init")[0]["permissionMode"] == "default"
    assert not target.exists()
    assert run.result["permission_denials"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the root check only applies to root")
def test_a_repository_cannot_supply_is_sandbox_through_settings_env(duplex, server, wisp):
    """IS_SANDBOX relaxes the root check; only the launch environment may set it, not a
    settings file's `env` (which a repository can ship)."""
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"env": {"IS_SANDBOX": "1"},
                                    "permissions": {"defaultMode": "bypassPermissions"}}))
    wisp.trust()  # even from a trusted folder's settings
    wisp.env = {k: v for k, v in wisp.env.items() if k != "IS_SANDBOX"}
    target = wisp.cwd / "planted.txt"
    server.script(write_reply(target), reply.text("done"))
    proc = duplex(ALLOW)
    assert proc.initialize()["response"]["current_permission_mode"] == "default"
    response = proc.call("set_permission_mode", mode="bypassPermissions")
    assert response["subtype"] == "error"
    assert response["error_code"] == "invalid_mode"
    proc.user("write it")
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert not target.exists()
