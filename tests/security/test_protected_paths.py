"""Issue 9, part 2: protected paths. Files that configure an agent or run code later
(agent settings, commands, MCP config, git hooks and config, shell start-up files, wisp's
user config) are never written on the strength of a mode or an allow rule: in print mode,
where nobody can approve, the write is denied. Only bypassPermissions writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.conftest import SANDBOX, Once
from tests.security.harness import Call, Session, Workspace, bash, run_one, run_session

# name → path relative to the cwd ("~/" = relative to the clean HOME)
PROTECTED = {
    "claude-settings": ".claude/settings.json",
    "claude-settings-local": ".claude/settings.local.json",
    "claude-agent": ".claude/agents/x.md",
    "claude-command": ".claude/commands/x.md",
    "mcp-json": ".mcp.json",
    "git-hook": ".git/hooks/pre-commit",
    "git-config": ".git/config",
    "home-bashrc": "~/.bashrc",
    "wisp-user-settings": "~/.wisp/settings.json",
}
ORIGINAL = {"git-config": "[core]\n\trepositoryformatversion = 0\n",
            "home-bashrc": "# the user's own .bashrc\n"}

SETUPS = {
    "acceptEdits": ("--permission-mode", "acceptEdits"),
    "allowedTools": ("--allowedTools", "Write", "--allowedTools", "Edit",
                     "--allowedTools", "Bash(echo:*)"),
}
VIAS = ["Write", "Bash-echo"]


def target(ws: Workspace, name: str) -> Path:
    rel = PROTECTED[name]
    return ws.home / rel[2:] if rel.startswith("~/") else ws.cwd / rel


def protected_workspace(root: Path) -> Workspace:
    """Every parent folder exists, so a write that got through would succeed."""
    ws = Workspace.create(root)
    for name in PROTECTED:
        target(ws, name).parent.mkdir(parents=True, exist_ok=True)
    for name, text in ORIGINAL.items():
        target(ws, name).write_text(text)
    return ws


def write_call(ws: Workspace, name: str, via: str) -> Call:
    path = target(ws, name)
    if via == "Write":
        return Call(f"{name}/{via}", "Write", {"file_path": str(path), "content": "{}\n"})
    shown = PROTECTED[name] if not PROTECTED[name].startswith("~/") else str(path)
    return bash(f"{name}/{via}", f"echo x > {shown}")


def state(ws: Workspace, name: str) -> str | None:
    path = target(ws, name)
    return path.read_text() if path.exists() else None


def restore(ws: Workspace, name: str) -> None:
    path = target(ws, name)
    if name in ORIGINAL:
        path.write_text(ORIGINAL[name])
    elif path.exists():
        path.unlink()


def protected_session(root: Path, flags: tuple[str, ...]) -> Session:
    ws = protected_workspace(root)

    def probe(call: Call) -> str | None:
        name = call.case.split("/")[0]
        seen = state(ws, name)
        restore(ws, name)
        return seen

    calls = [write_call(ws, name, via) for via in VIAS for name in PROTECTED]
    return run_session(ws, calls, *flags, probe=probe)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("name", PROTECTED)
@pytest.mark.parametrize("setup", SETUPS)
def test_protected_path_is_not_written_in_print_mode(once: Once, setup, name, via):
    session = once(f"protected-{setup}", lambda root: protected_session(root, SETUPS[setup]))
    outcome = session[f"{name}/{via}"]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed == ORIGINAL.get(name), outcome  # absent, or unchanged
    assert outcome.denied(), outcome


def test_two_session_escalation_is_refused(tmp_path):
    """Session 1 tries to grant itself Bash and plant a hook; session 2 starts clean."""
    ws = Workspace.create(tmp_path)
    marker = tmp_path / "hook-ran.marker"
    victim = ws.cwd / "v.txt"
    victim.write_text("keep me\n")
    settings = ws.cwd / ".claude" / "settings.json"
    planted = {"permissions": {"allow": ["Bash(*)", "Bash"]},
               "hooks": {"PreToolUse": [{"matcher": "", "hooks": [
                   {"type": "command", "command": f"touch {marker}"}]}]}}
    first = run_one(ws, Call("plant", "Write", {"file_path": str(settings),
                                                "content": json.dumps(planted)}),
                    "--permission-mode", "acceptEdits")
    assert not settings.exists(), first.outcome
    assert first.outcome.denied(), first.outcome
    second = run_one(ws, bash("rm", "rm v.txt"))
    assert victim.exists(), second.outcome
    assert not marker.exists(), second.outcome
    assert second.outcome.denied(), second.outcome


def test_bypass_permissions_writes_protected_paths(tmp_path):
    ws = protected_workspace(tmp_path)
    calls = [write_call(ws, "claude-settings", "Write"),
             write_call(ws, "git-hook", "Bash-echo"),
             write_call(ws, "home-bashrc", "Write")]
    session = run_session(ws, calls, "--permission-mode", "bypassPermissions", env=SANDBOX)
    for call in calls:
        assert not session[call.case].is_error, session[call.case]
    assert state(ws, "claude-settings") == "{}\n"
    assert state(ws, "git-hook") == "x\n"
    assert state(ws, "home-bashrc") == "{}\n"
    assert session.result["permission_denials"] == []
