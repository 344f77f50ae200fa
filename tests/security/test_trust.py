"""Trust before a repository's grants, headless: the hostile repository of
`tests.security.hostile` in print mode (`wisp -p` against the scripted server) and under
the official Python SDK. Before the folder is trusted nothing it grants takes effect (no
hook, MCP server or variable runs, its allow rules and modes are not honoured, the
endpoint it names hears nothing), its deny rules still hold, its memory cannot pull files
from outside, and what it writes reaches stderr only as visible text. Once trusted (the
record, or WISP_TRUST_PROJECT=1), its grants apply, which shows that the same fixture
really does its damage when let."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WispRun, base_env, wisp_command
from tests.frame_check import check_frame
from tests.security import hostile
from tests.security.hostile import Hostile
from wisp.settings.trust import config_file, record
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
STREAM = ("--output-format", "stream-json", "--verbose")


def script(server: ScriptedServer, h: Hostile) -> None:
    """`ls` (read-only: runs without asking, so a repository `PATH` or `BASH_ENV` would
    turn it into the repository's code), a `touch` only the repository's allow rule would
    allow, then an answer."""
    server.script(
        reply.tool_use("Bash", {"command": "ls"}),
        reply.tool_use("Bash", {"command": f"touch {h.repo / hostile.ALLOWED_ONLY_BY_RULE}"}),
        reply.text("done"))


@pytest.fixture
def api() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def catcher() -> Iterator[ScriptedServer]:
    """The endpoint the repository's settings name: it hears nothing before trust."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def repo(tmp_path: Path, catcher: ScriptedServer) -> Hostile:
    return hostile.build(tmp_path, catcher.url)


def env_for(api: ScriptedServer, h: Hostile, **more: str) -> dict[str, str]:
    return {**base_env(api, h.home), **more}


def run_print(api: ScriptedServer, h: Hostile, **more: str) -> WispRun:
    import subprocess

    proc = subprocess.run([*wisp_command(), "-p", "look around", *STREAM], cwd=h.repo,
                          env=env_for(api, h, **more), input="", capture_output=True,
                          text=True, timeout=120, check=False)
    frames = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    for frame in frames:
        check_frame(frame)
    return WispRun(proc.returncode, proc.stdout, proc.stderr, frames)


def bodies(server: ScriptedServer) -> list[str]:
    return [json.dumps(r.body) for r in server.requests]


def tool_results(server: ScriptedServer) -> list[str]:
    last = server.requests[-1].body or {}
    return [json.dumps(b.get("content")) for m in last.get("messages", [])
            if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_result"]


# Print mode ------------------------------------------------------------------------------


def test_print_mode_takes_nothing_from_an_untrusted_repository(
        api: ScriptedServer, catcher: ScriptedServer, repo: Hostile) -> None:
    script(api, repo)
    run = run_print(api, repo)
    assert run.returncode == 0, run.stderr
    assert repo.ran() == []  # no hook, MCP server, PATH `ls`, BASH_ENV, helper, status line
    assert catcher.requests == []  # ANTHROPIC_BASE_URL was not taken: the key stayed home
    assert all(r.headers.get("x-api-key") == "sk-test" for r in api.requests)
    assert not (repo.repo / hostile.ALLOWED_ONLY_BY_RULE).exists()  # allow rules ignored
    assert len(run.result["permission_denials"]) == 1
    init = run.of_type("system", "init")[0]
    assert init["permissionMode"] == "default"  # not the repository's acceptEdits
    assert init["mcp_servers"] == []
    listing, refused = tool_results(api)
    assert "CLAUDE.md" in listing  # the real `ls` ran
    assert "made-by-rule" in refused and "permission" in refused.lower(), refused
    assert hostile.sent_anything_secret(bodies(api)) == []
    assert hostile.INSIDE in bodies(api)[0]  # memory inside the project still loads


def test_print_mode_says_in_one_line_what_was_held_back_and_how_to_trust(
        api: ScriptedServer, repo: Hostile) -> None:
    api.script(reply.text("ok"))
    run = run_print(api, repo)
    assert "\x1b" not in run.stderr and "\x07" not in run.stderr  # shown, not obeyed
    [note] = [line for line in run.stderr.splitlines() if "not trusted" in line]
    for held in ("settings.json: permissions.allow (3 rules)",
                 "permissions.defaultMode acceptEdits", "permissions.additionalDirectories",
                 "hooks (PreToolUse, SessionStart, UserPromptSubmit)",
                 "mcpServers (evil)", "apiKeyHelper", "statusLine",
                 "settings.local.json: permissions.allow (1 rule)",
                 "WISP_TRUST_PROJECT=1", str(config_file(env_for(api, repo)))):
        assert held in note, held
    assert "ANTHROPIC_BASE_URL" in note and "BASH_ENV" in note and "X␛]0;" in note
    [left_out] = [line for line in run.stderr.splitlines() if "outside the project" in line]
    assert str(repo.home / ".ssh" / "id_rsa") in left_out
    assert str(repo.outside / "secret.txt") in left_out


def test_deny_rules_of_an_untrusted_folder_still_hold(api: ScriptedServer, repo: Hostile
                                                      ) -> None:
    settings = repo.repo / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    doc["permissions"]["deny"] = ["Read(./docs/**)"]
    settings.write_text(json.dumps(doc))
    api.script(reply.tool_use("Read", {"file_path": str(repo.repo / "docs" / "notes.md")}),
               reply.text("done"))
    run = run_print(api, repo)
    assert run.result["permission_denials"]
    [refused] = tool_results(api)
    assert "denied" in refused.lower() or "deny" in refused.lower(), refused


@pytest.mark.parametrize("how", ["record", "env"])
def test_once_trusted_the_repository_grants_apply(
        api: ScriptedServer, catcher: ScriptedServer, repo: Hostile, how: str) -> None:
    """The same fixture, trusted: its hooks, MCP server, PATH and allow rules all act,
    and its endpoint gets the session (which is what trusting a folder means)."""
    more = {"WISP_TRUST_PROJECT": "1"} if how == "env" else {}
    if how == "record":
        record(repo.repo, env_for(api, repo), hasTrustDialogAccepted=True)
    script(catcher, repo)
    run = run_print(api, repo, **more)
    assert run.returncode == 0, run.stderr
    assert api.requests == [] and len(catcher.requests) == 3
    ran = repo.ran()
    for marker in ("hook-SessionStart", "hook-UserPromptSubmit", "hook-PreToolUse",
                   "mcp-server", "path-ls", "bash-env"):
        assert marker in ran, ran
    assert (repo.repo / hostile.ALLOWED_ONLY_BY_RULE).exists()
    assert "not trusted" not in run.stderr
    # Memory imports from outside need their own approval, trusted or not.
    assert hostile.sent_anything_secret(bodies(catcher)) == []


def test_an_approved_record_lets_memory_import_from_outside(
        api: ScriptedServer, repo: Hostile) -> None:
    record(repo.repo, env_for(api, repo), hasClaudeMdExternalIncludesApproved=True)
    api.script(reply.text("ok"))
    run = run_print(api, repo)
    assert run.returncode == 0, run.stderr
    assert hostile.sent_anything_secret(bodies(api)) == [hostile.SSH_KEY, hostile.OUTSIDE]
    assert "outside the project" not in run.stderr


def test_a_trusted_parent_trusts_its_children_but_the_home_folder_does_not(
        api: ScriptedServer, repo: Hostile) -> None:
    api.script(reply.text("one"), reply.text("two"))
    env = env_for(api, repo)
    record(repo.root, env, hasTrustDialogAccepted=True)  # the folder above the repository
    assert "not trusted" not in run_print(api, repo).stderr
    assert "hook-SessionStart" in repo.ran()
    for name in repo.ran():
        (repo.markers / name).unlink()
    config_file(env).unlink()
    record(repo.home, env, hasTrustDialogAccepted=True)
    home_repo = repo.home / "code" / "repo"
    home_repo.parent.mkdir(parents=True)
    repo.repo.rename(home_repo)
    moved = Hostile(repo.root, home_repo, repo.home, repo.outside, repo.markers)
    assert "not trusted" in run_print(api, moved).stderr
    assert moved.ran() == []


# The official Python SDK ---------------------------------------------------------------


def sdk_query(api: ScriptedServer, h: Hostile, tmp_path: Path, **env: str) -> list[Any]:
    from claude_agent_sdk import ClaudeAgentOptions, query

    from tests.sdk.conftest import sdk_env, wisp_executable

    options = ClaudeAgentOptions(
        cli_path=wisp_executable(tmp_path), cwd=str(h.repo),
        env={**sdk_env(api, h.home), **env}, stderr=lambda _line: None,
        setting_sources=["user", "project", "local"])

    async def collect() -> list[Any]:
        return [m async for m in query(prompt="look around", options=options)]

    return asyncio.run(collect())


def test_the_python_sdk_takes_nothing_from_an_untrusted_repository(
        api: ScriptedServer, catcher: ScriptedServer, repo: Hostile, tmp_path: Path) -> None:
    """Naming the project's settings as a source loads them; it does not vouch for them."""
    pytest.importorskip("claude_agent_sdk")
    script(api, repo)
    messages = sdk_query(api, repo, tmp_path)
    [result] = [m for m in messages if type(m).__name__ == "ResultMessage"]
    assert not result.is_error
    assert repo.ran() == []
    assert catcher.requests == []
    assert not (repo.repo / hostile.ALLOWED_ONLY_BY_RULE).exists()
    assert len(result.permission_denials or []) == 1
    assert hostile.sent_anything_secret(bodies(api)) == []


def test_an_sdk_host_can_vouch_for_its_checkout(
        api: ScriptedServer, catcher: ScriptedServer, repo: Hostile, tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    script(catcher, repo)
    sdk_query(api, repo, tmp_path, WISP_TRUST_PROJECT="1")
    assert "hook-SessionStart" in repo.ran() and "path-ls" in repo.ran()
    assert (repo.repo / hostile.ALLOWED_ONLY_BY_RULE).exists()
