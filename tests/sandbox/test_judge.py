"""How the sandbox changes the judgement of a Bash call: the real judge, the real Bash
tool and a real session sandbox (whose probe decides whether auto-allow is earned)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.helpers import make_sandbox
from wisp.permissions.engine import PermissionPolicy, evaluate
from wisp.rules import Rule
from wisp.sandbox.runner import CommandSandbox, excluded
from wisp.tools.bash import Bash

INLINE = "python3 -c 'import os; os.remove(\"x\")'"


@pytest.fixture
def box(tmp_path: Path) -> Iterator[CommandSandbox]:
    (tmp_path / "home").mkdir()
    sandbox = make_sandbox(tmp_path, tmp_path / "home", auto_allow=True,
                           excluded_commands=("docker", "npm run test:*"))
    yield sandbox
    sandbox.close()


def judge(box: CommandSandbox, tool_input: dict, *, mode: str = "default",
          allow: tuple[str, ...] = (), deny: tuple[str, ...] = (), ask: tuple[str, ...] = ()):
    policy = PermissionPolicy(mode=mode, cwd=Path(box.profile.writable[0]),
                              allow=[Rule.parse(r) for r in allow],
                              deny=[Rule.parse(r) for r in deny],
                              ask=[Rule.parse(r) for r in ask], env=dict(os.environ))
    policy.sandbox = box
    return evaluate(Bash(), tool_input, policy)


@pytest.mark.usefixtures("bwrap")
def test_a_sandboxed_call_that_would_be_asked_runs_without_asking(box):
    verdict = judge(box, {"command": INLINE})
    assert (verdict.behavior, verdict.source) == ("allow", "sandbox")


@pytest.mark.usefixtures("bwrap")
def test_deny_and_ask_rules_still_hold(box):
    assert judge(box, {"command": INLINE}, deny=("Bash(python3:*)",)).behavior == "deny"
    asked = judge(box, {"command": INLINE}, ask=("Bash(python3:*)",))
    assert (asked.behavior, asked.source) == ("ask", "rule")


@pytest.mark.usefixtures("bwrap")
def test_excluded_commands_take_the_normal_judgement(box):
    verdict = judge(box, {"command": "docker run --rm alpine rm -rf /data"})
    assert verdict.behavior == "ask" and verdict.source != "sandbox"


@pytest.mark.usefixtures("bwrap")
def test_dangerously_disable_sandbox_needs_approval(box):
    call = {"command": INLINE, "dangerouslyDisableSandbox": True}
    verdict = judge(box, call)
    assert (verdict.behavior, verdict.source) == ("ask", "sandboxOverride")
    assert judge(box, {"command": "echo hi", "dangerouslyDisableSandbox": True}
                 ).behavior == "ask"  # even a read-only command: it leaves the sandbox
    assert judge(box, call, allow=("Bash(python3:*)",)).behavior == "allow"
    assert judge(box, call, mode="bypassPermissions").behavior == "allow"
    assert judge(box, call, deny=("Bash(python3:*)",)).behavior == "deny"


@pytest.mark.usefixtures("bwrap")
def test_the_flag_is_ignored_when_unsandboxed_commands_are_not_allowed(tmp_path):
    (tmp_path / "home").mkdir()
    box = make_sandbox(tmp_path, tmp_path / "home", auto_allow=True,
                       allow_unsandboxed=False)
    try:
        call = {"command": INLINE, "dangerouslyDisableSandbox": True}
        assert box.runs_sandboxed(call)
        assert judge(box, call).source == "sandbox"
    finally:
        box.close()


@pytest.mark.usefixtures("landlock")
def test_landlock_does_not_earn_auto_allow(tmp_path):
    (tmp_path / "home").mkdir()
    box = make_sandbox(tmp_path, tmp_path / "home", auto_allow=True,
                       env={"WISP_BWRAP": ""})
    try:
        assert box.mechanism == "landlock" and box.runs_sandboxed({"command": INLINE})
        assert judge(box, {"command": INLINE}).behavior == "ask"
    finally:
        box.close()


def test_excluded_commands_use_the_rule_grammar():
    patterns = ("docker", "npm run test:*", "make *")
    assert excluded("docker ps", patterns) and excluded("docker", patterns)
    assert not excluded("dockerd --debug", patterns)
    assert excluded("npm run test -- --watch", patterns)
    assert excluded("make build", patterns) and not excluded("cmake .", patterns)
    # every command of the line must be excluded for the line to leave the sandbox
    assert excluded("docker ps && docker images", patterns)
    assert not excluded("docker ps && python3 -c 'print(1)'", patterns)
    assert not excluded("docker ps", ())
