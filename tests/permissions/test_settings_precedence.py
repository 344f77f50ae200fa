"""Settings sources and their precedence; broken files are named, skipped, and survived."""

from __future__ import annotations

import json

from wisp.testing import reply


def put(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))


def write_call(wisp, name="out.txt"):
    return reply.tool_use("Write", {"file_path": str(wisp.cwd / name), "content": "x"})


def test_project_allow_plus_user_deny_is_denied(wisp, server):
    put(wisp.home / ".wisp" / "settings.json", {"permissions": {"deny": ["Write"]}})
    put(wisp.cwd / ".claude" / "settings.json", {"permissions": {"allow": ["Write"]}})
    wisp.trust()  # or the project's allow would not count at all
    server.script(write_call(wisp), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "json")
    assert not (wisp.cwd / "out.txt").exists()
    assert json.loads(run.stdout)["permission_denials"]


def test_local_allow_overrides_project_ask(wisp, server):
    put(wisp.cwd / ".claude" / "settings.json", {"permissions": {"ask": ["Write"]}})
    put(wisp.cwd / ".claude" / "settings.local.json", {"permissions": {"allow": ["Write"]}})
    wisp.trust()
    server.script(write_call(wisp), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "json")
    assert (wisp.cwd / "out.txt").exists()
    assert json.loads(run.stdout)["permission_denials"] == []


def test_project_ask_without_a_host_is_a_reported_denial(wisp, server):
    put(wisp.cwd / ".claude" / "settings.json", {"permissions": {"ask": ["Bash(echo:*)"]}})
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.of_type("system", "permission_denied")
    assert run.result["permission_denials"][0]["tool_name"] == "Bash"


def test_invalid_project_settings_warns_with_its_name_and_the_run_goes_on(wisp, server):
    bad = wisp.cwd / ".claude" / "settings.json"
    put(bad, "{ this is not json")
    server.script(reply.text("still fine"))
    run = wisp("-p", "x")
    assert run.returncode == 0
    assert run.stdout == "still fine\n"
    assert str(bad) in run.stderr
    assert "invalid JSON" in run.stderr


def test_settings_that_do_not_validate_are_skipped_with_the_reason(wisp, server):
    bad = wisp.cwd / ".claude" / "settings.json"
    put(bad, {"permissions": {"allow": "Write"}})
    server.script(write_call(wisp), reply.text("done"))
    run = wisp("-p", "x")
    assert str(bad) in run.stderr and "permissions.allow must be a list" in run.stderr
    assert not (wisp.cwd / "out.txt").exists()


def test_settings_flag_overrides_files_and_default_mode_applies(wisp, server):
    put(wisp.cwd / ".claude" / "settings.json", {"permissions": {"defaultMode": "plan"}})
    flag = json.dumps({"permissions": {"defaultMode": "acceptEdits"}})
    server.script(write_call(wisp), reply.text("done"))
    wisp("-p", "x", "--settings", flag)
    assert (wisp.cwd / "out.txt").exists()


def test_setting_sources_selects_files(wisp, server):
    put(wisp.cwd / ".claude" / "settings.json", {"permissions": {"allow": ["Write"]}})
    wisp.trust()  # trusted, and still not read: only user settings were selected
    server.script(write_call(wisp), reply.text("done"))
    wisp("-p", "x", "--setting-sources", "user")
    assert not (wisp.cwd / "out.txt").exists()


def test_add_dir_extends_accept_edits(wisp, server, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    server.script(reply.tool_use("Write", {"file_path": str(extra / "e.txt"), "content": "x"}),
                  reply.text("done"))
    wisp("-p", "x", "--permission-mode", "acceptEdits", "--add-dir", str(extra))
    assert (extra / "e.txt").exists()
