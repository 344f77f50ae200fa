"""Unknown settings keys are reported on stderr (file, key, closest known key), once per
file, and the run goes on; a valid Claude Code settings file says nothing. The real
`wisp` process against the scripted Messages API."""

from __future__ import annotations

import json

from tests.duplex.harness import Duplex
from wisp.testing import reply

# A settings file as Claude Code users write them: every key here is one the reference's
# schema knows (or, for `providers`, wisp's own).
FULL_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "apiKeyHelper": "/bin/echo sk-unused",
    "awsAuthRefresh": "aws sso login",
    "cleanupPeriodDays": 30,
    "companyAnnouncements": ["Welcome"],
    "env": {"FOO": "bar"},
    "includeCoAuthoredBy": False,
    "forceLoginMethod": "console",
    "spinnerTipsEnabled": False,
    "alwaysThinkingEnabled": True,
    "permissions": {
        "allow": ["Bash(git diff:*)", "Read"], "deny": ["Read(./.env)"], "ask": ["Bash(rm:*)"],
        "defaultMode": "default", "additionalDirectories": ["../docs"],
        "disableBypassPermissionsMode": "disable",
    },
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "true", "timeout": 5}]}]},
    "model": "sonnet",
    "statusLine": {"type": "command", "command": "echo status", "padding": 0},
    "outputStyle": "default",
    "sandbox": {"enabled": False, "autoAllowBashIfSandboxed": True,
                "excludedCommands": ["docker"],
                "network": {"allowUnixSockets": ["/var/run/docker.sock"],
                            "allowLocalBinding": True},
                "filesystem": {"denyRead": ["~/.ssh"]}},
    "enabledPlugins": {"formatter@tools": True},
    "extraKnownMarketplaces": {"tools": {"source": {"source": "github", "repo": "o/r"}}},
    "enableAllProjectMcpServers": True,
    "enabledMcpjsonServers": ["memory"],
    "disabledMcpjsonServers": ["github"],
    "attribution": {"commit": "", "pr": ""},
    "worktree": {"symlinkDirectories": ["node_modules"]},
    "theme": "dark",
    "language": "english",
    "autoUpdatesChannel": "stable",
    "autoMemoryEnabled": False,
    "providers": {"local": {"type": "openai", "base_url": "http://127.0.0.1:9/v1",
                            "models": {"m": {"context_window": 8192}}}},
}


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_unknown_keys_are_reported_per_file_and_the_run_goes_on(wisp, server):
    server.script(reply.text("ran"))
    project = write(wisp.cwd / ".claude" / "settings.json",
                    {"permissions": {"alow": ["Bash"], "allow": []}, "modle": "opus"})
    user = write(wisp.home / ".wisp" / "settings.json", {"envv": {"A": "1"}})
    wisp.trust()  # else a line about its held-back keys comes too (tested in tests/security)
    run = wisp("-p", "hi")
    assert (run.returncode, run.stdout) == (0, "ran\n")
    assert run.stderr.splitlines() == [
        f"wisp: warning: {user}: unknown key envv (did you mean env?)",
        f"wisp: warning: {project}: unknown key permissions.alow "
        "(did you mean permissions.allow?)",
        f"wisp: warning: {project}: unknown key modle (did you mean model?)",
    ]
    assert len(server.requests) == 1


def test_inline_settings_are_named_by_their_flag(wisp, server):
    server.script(reply.text("ran"))
    run = wisp("-p", "hi", "--settings", '{"hooks": {}, "outputStlye": "x"}')
    assert run.returncode == 0
    assert run.stderr == ("wisp: warning: --settings: unknown key outputStlye "
                          "(did you mean outputStyle?)\n")


def test_a_key_nothing_resembles_is_reported_without_a_guess(wisp, server):
    server.script(reply.text("ran"))
    project = write(wisp.cwd / ".claude" / "settings.local.json", {"zzzzzzzzzz": 1})
    wisp.trust()
    run = wisp("-p", "hi")
    assert run.stderr == f"wisp: warning: {project}: unknown key zzzzzzzzzz\n"


def test_a_valid_claude_code_settings_file_says_nothing(wisp, server):
    server.script(reply.text("ran"))
    write(wisp.cwd / ".claude" / "settings.json", FULL_SETTINGS)
    wisp.trust()
    run = wisp("-p", "hi")
    assert (run.returncode, run.stdout, run.stderr) == (0, "ran\n", "")


def test_stream_json_stdout_stays_pure_ndjson(wisp, server):
    server.script(reply.text("ran"))
    write(wisp.cwd / ".claude" / "settings.json", {"permissions": {"alow": []}})
    run = wisp("-p", "hi", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    assert all(json.loads(line) for line in run.stdout.splitlines())
    assert run.result["result"] == "ran"
    assert "unknown key permissions.alow" in run.stderr
    assert "alow" not in run.stdout


def test_a_duplex_session_reports_each_file_once(wisp, server):
    server.script(reply.text("one"), reply.text("two"))
    project = write(wisp.cwd / ".claude" / "settings.json", {"permissions": {"alow": []}})
    session = Duplex(wisp)
    try:
        session.initialize()
        for n, prompt in enumerate(("first", "second"), start=1):
            session.user(prompt)
            session.wait_frame("result", count=n)
        assert session.finish() == 0
    finally:
        session.kill()
    assert session.stderr.count(f"{project}: unknown key permissions.alow") == 1


def test_a_hook_event_wisp_does_not_run_is_reported_and_the_file_still_protects(
        wisp, server, tmp_path):
    """A file written for a newer reference (or with a misspelt event) keeps its other
    hooks and its deny rules; only the unknown event is left out, and named."""
    witness = tmp_path / "hook-ran"
    victim = wisp.cwd / "keep.txt"
    victim.write_text("kept")
    hook = [{"hooks": [{"type": "command", "command": f"touch {witness}"}]}]
    user = write(wisp.home / ".wisp" / "settings.json", {
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash"]},
        "hooks": {"UserPromptSubmit": hook, "PreToolUze": hook, "SomeFutureEvent": hook}})
    server.script(reply.tool_use("Bash", {"command": "rm keep.txt"}), reply.text("done"))
    run = wisp("-p", "go")
    assert run.returncode == 0
    assert victim.read_text() == "kept" and witness.exists()
    assert run.stderr.splitlines() == [
        f"wisp: warning: {user}: unknown key hooks.PreToolUze "
        "(did you mean hooks.PreToolUse?)",
        f"wisp: warning: {user}: unknown key hooks.SomeFutureEvent",
    ]


def test_a_file_skipped_for_a_mistake_keeps_its_deny_and_ask_rules(wisp, server):
    """An invalid file grants nothing, but what it forbids still holds."""
    victim = wisp.cwd / "keep.txt"
    victim.write_text("kept")
    user = write(wisp.home / ".wisp" / "settings.json", {
        "model": 5, "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash"]}})
    server.script(reply.tool_use("Bash", {"command": "rm keep.txt"}), reply.text("done"))
    run = wisp("-p", "go", "--allowedTools", "Bash")  # what the file forbids still wins
    assert run.returncode == 0
    assert victim.read_text() == "kept"
    assert run.stderr == (f"wisp: warning: skipping settings file {user}: model must be a "
                          "string (its deny and ask rules still apply)\n")
