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
