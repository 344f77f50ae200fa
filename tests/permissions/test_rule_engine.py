"""The permission engine judged directly, without a process: rule syntax and precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from wisp.permissions.engine import PermissionPolicy, evaluate
from wisp.rules import Rule
from wisp.tools.registry import builtin_tools

TOOLS = builtin_tools()


def policy(tmp_path: Path, **rules: list[str]) -> PermissionPolicy:
    return PermissionPolicy(mode="default", cwd=tmp_path,
                            **{k: [Rule.parse(r) for r in v] for k, v in rules.items()})


def edit(path: str) -> dict[str, str]:
    return {"file_path": path, "old_string": "a", "new_string": "b"}


@pytest.mark.parametrize(("path", "denied"), [
    ("src/a.ts", True), ("src/deep/b.tsx", True), ("src/c.py", False), ("lib/a.ts", False),
])
def test_brace_globs_in_path_rules(tmp_path, path, denied):
    rules = policy(tmp_path, deny=["Edit(./src/**/*.{ts,tsx})"])
    verdict = evaluate(TOOLS["Edit"], edit(path), rules)
    assert (verdict.behavior == "deny") is denied


def test_deny_beats_allow_and_ask(tmp_path):
    rules = policy(tmp_path, allow=["Bash"], ask=["Bash(git:*)"], deny=["Bash(git push:*)"])
    assert evaluate(TOOLS["Bash"], {"command": "git push origin"}, rules).behavior == "deny"
    assert evaluate(TOOLS["Bash"], {"command": "git status"}, rules).behavior == "ask"
    assert evaluate(TOOLS["Bash"], {"command": "make"}, rules).behavior == "allow"


def test_higher_ranked_allow_beats_lower_ranked_ask(tmp_path):
    rules = PermissionPolicy(cwd=tmp_path, ask=[Rule.parse("Write", rank=2)],
                             allow=[Rule.parse("Write", rank=3)])
    assert evaluate(TOOLS["Write"], {"file_path": "x", "content": ""}, rules).behavior == "allow"


def test_webfetch_domain_rules(tmp_path):
    rules = policy(tmp_path, allow=["WebFetch(domain:example.com)"])
    fetch = TOOLS["WebFetch"]
    assert evaluate(fetch, {"url": "https://docs.example.com/a", "prompt": "p"},
                    rules).behavior == "allow"
    assert evaluate(fetch, {"url": "https://example.org/", "prompt": "p"},
                    rules).behavior == "ask"


def test_mcp_server_rule_covers_its_tools():
    assert Rule.parse("mcp__calc").names_tool("mcp__calc__add")
    assert not Rule.parse("mcp__calc").names_tool("mcp__calculator__add")
    assert Rule.parse("mcp__calc__add").names_tool("mcp__calc__add")


def test_bypass_still_honours_deny(tmp_path):
    rules = policy(tmp_path, deny=["Write(./locked/**)"])
    rules.mode = "bypassPermissions"
    write = TOOLS["Write"]
    assert evaluate(write, {"file_path": "locked/x", "content": ""}, rules).behavior == "deny"
    assert evaluate(write, {"file_path": "open/x", "content": ""}, rules).behavior == "allow"


@pytest.mark.parametrize(("command", "behavior"), [
    ("npm run test", "allow"), ("npm run test -- --watch", "allow"),
    ("npm run testevil", "ask"), ("npm run test-all", "ask"), ("npm run", "ask"),
])
def test_a_prefix_rule_ends_at_a_word(tmp_path, command, behavior):
    """`Bash(npm run test:*)` is the command `npm run test` with any arguments, not any
    command whose text starts with those letters."""
    rules = policy(tmp_path, allow=["Bash(npm run test:*)"])
    assert evaluate(TOOLS["Bash"], {"command": command}, rules).behavior == behavior


@pytest.mark.parametrize(("path", "denied"), [
    ("secret", True), ("secret/a.txt", True), ("secret/deep/b.txt", True),
    ("secret-notes.txt", False), ("secrets/a.txt", False), ("a/secret", False),
])
def test_a_folder_rule_covers_what_is_below_it_and_no_sibling(tmp_path, path, denied):
    rules = policy(tmp_path, deny=["Read(./secret)"])
    verdict = evaluate(TOOLS["Read"], {"file_path": str(tmp_path / path)}, rules)
    assert (verdict.behavior == "deny") is denied, verdict


@pytest.mark.parametrize(("command", "behavior"), [
    ("cat notes.txt", "allow"), ("cat sub/notes.txt", "allow"),
    ("cat /etc/hostname", "ask"), ("cat ../elsewhere.txt", "ask"),
    ("head -n 1 notes.txt /etc/hostname", "ask"), ("cat ../work-other/notes.txt", "ask"),
])
def test_a_read_only_command_reads_freely_only_inside_the_working_folders(
        tmp_path, command, behavior):
    work = tmp_path / "work"
    work.mkdir()
    rules = PermissionPolicy(mode="default", cwd=work)
    assert evaluate(TOOLS["Bash"], {"command": command}, rules).behavior == behavior


@pytest.mark.parametrize(("command", "behavior"), [
    ("echo hi", "allow"), ("echo hi > out.txt", "ask"), ("echo hi >> out.txt", "ask"),
])
def test_a_program_rule_does_not_grant_a_redirection_around_it(tmp_path, command, behavior):
    """`Bash(echo:*)` grants what echo does; writing a file is the shell's doing."""
    rules = policy(tmp_path, allow=["Bash(echo:*)"])
    assert evaluate(TOOLS["Bash"], {"command": command}, rules).behavior == behavior
    everything = policy(tmp_path, allow=["Bash"])  # the bare rule grants it all
    assert evaluate(TOOLS["Bash"], {"command": command}, everything).behavior == "allow"


@pytest.mark.parametrize(("path", "behavior"), [
    ("src/a.py", "allow"), (".github/workflows/ci.yml", "allow"),
    (".git/hooks/pre-commit", "ask"), (".claude/settings.json", "ask"),
    ("sub/.husky/pre-push", "ask"), (".wisp/agents/a.md", "ask"), (".git", "ask"),
])
def test_writes_inside_configuration_folders_always_ask(tmp_path, path, behavior):
    """acceptEdits and an allow rule grant writes in the working folder, except to what
    configures an agent or runs code later (hooks, settings)."""
    target = {"file_path": str(tmp_path / path), "content": "x"}
    accept = PermissionPolicy(mode="acceptEdits", cwd=tmp_path)
    assert evaluate(TOOLS["Write"], target, accept).behavior == behavior
    rule = policy(tmp_path, allow=["Write"])
    assert evaluate(TOOLS["Write"], target, rule).behavior == behavior


@pytest.mark.parametrize(("where", "behavior"), [
    ("work/a.txt", "allow"), ("work/sub/a.txt", "allow"),
    ("work-other/a.txt", "ask"), ("workshop/a.txt", "ask"),
])
def test_accept_edits_stops_at_the_working_folder_not_at_its_name(tmp_path, where, behavior):
    work = tmp_path / "work"
    work.mkdir()
    accept = PermissionPolicy(mode="acceptEdits", cwd=work)
    target = {"file_path": str(tmp_path / where), "content": "x"}
    assert evaluate(TOOLS["Write"], target, accept).behavior == behavior
