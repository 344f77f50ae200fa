"""Deny rules cannot be sidestepped by spelling a path or a command differently."""

from __future__ import annotations

import json
import os

import pytest

from wisp.testing import reply

BYPASS = ("--permission-mode", "bypassPermissions")
SANDBOX = {"IS_SANDBOX": "1"}


def write_settings(directory, doc):
    (directory / ".claude").mkdir(exist_ok=True)
    (directory / ".claude" / "settings.json").write_text(json.dumps(doc))


@pytest.fixture
def secret(wisp):
    folder = wisp.cwd / "secret"
    folder.mkdir()
    target = folder / "key.txt"
    target.write_text("original")
    write_settings(wisp.cwd, {"permissions": {"deny": ["Edit(./secret/**)"]}})
    return target


def edit_via(path):
    return reply.tool_use("Edit", {"file_path": path, "old_string": "original",
                                   "new_string": "changed"})


@pytest.mark.parametrize("spelling", ["relative_dotdot", "absolute", "symlink"])
def test_edit_deny_rule_holds_for_every_spelling(wisp, server, secret, spelling):
    if spelling == "relative_dotdot":
        (wisp.cwd / "sub").mkdir()
        path = "sub/../secret/key.txt"
    elif spelling == "absolute":
        path = str(secret)
    else:
        link = wisp.cwd / "innocent.txt"
        os.symlink(secret, link)
        path = str(link)
    server.script(edit_via(path), reply.text("done"))
    run = wisp("-p", "x", *BYPASS, "--output-format", "json", env=SANDBOX)
    assert run.returncode == 0
    assert secret.read_text() == "original"
    assert json.loads(run.stdout)["permission_denials"][0]["tool_name"] == "Edit"


def test_edit_outside_the_denied_folder_still_works(wisp, server, secret):
    other = wisp.cwd / "free.txt"
    other.write_text("original")
    server.script(edit_via(str(other)), reply.text("done"))
    wisp("-p", "x", *BYPASS, env=SANDBOX)
    assert other.read_text() == "changed"


@pytest.mark.parametrize("template", [
    "echo x && rm {f}",
    "echo $(rm {f})",
    "bash -c 'rm {f}'",
    "echo `rm {f}`",
    "true; rm {f}",
    "ls | rm {f}",
    "sh -c \"echo hi; rm {f}\"",
])
def test_bash_deny_rule_holds_through_compound_commands(wisp, server, template):
    victim = wisp.cwd / "f.txt"
    victim.write_text("keep me")
    write_settings(wisp.cwd, {"permissions": {"deny": ["Bash(rm:*)"]}})
    server.script(reply.tool_use("Bash", {"command": template.format(f=victim)}),
                  reply.text("done"))
    run = wisp("-p", "x", *BYPASS, "--output-format", "json", env=SANDBOX)
    assert victim.exists(), template
    assert json.loads(run.stdout)["permission_denials"][0]["tool_name"] == "Bash"


def test_disallowed_tools_flag_with_content_is_a_deny_rule(wisp, server):
    victim = wisp.cwd / "g.txt"
    victim.write_text("keep")
    server.script(reply.tool_use("Bash", {"command": f"echo a && rm {victim}"}),
                  reply.text("done"))
    wisp("-p", "x", *BYPASS, "--disallowedTools", "Bash(rm:*)", env=SANDBOX)
    assert victim.exists()
