"""Issue 9, parts 7 and 8, through the official Python Agent SDK driving the real `wisp`:
an approval's `updatedInput` (the host's, or a PreToolUse hook's) cannot route a call
around a deny rule or into a protected path, and boundary and protected-path calls reach
the host's `can_use_tool` instead of being decided silently."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.sdk.conftest import sdk_env, wisp_executable
from wisp.settings.trust import record
from wisp.testing import ScriptedServer, reply

pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is not installed")
from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    query,
)

T = TypeVar("T")
JSON = dict[str, Any]
KEY_MATERIAL = "KEYMATERIAL-sdk-0e41"


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


async def one_prompt(text: str) -> Any:
    """A streaming prompt: `can_use_tool` needs one."""
    yield {"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": None, "session_id": ""}


class Host:
    """A `can_use_tool` that records every question and answers with `answer(name, input)`."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[tuple[str, JSON]] = []

    async def __call__(self, name: str, tool_input: JSON, _context: Any) -> Any:
        self.asked.append((name, tool_input))
        return self.answer(name, tool_input)


def session(server: ScriptedServer, tmp_path: Path, call: tuple[str, JSON], host: Host,
            **options: Any) -> tuple[ResultMessage, JSON]:
    """One tool call through the SDK; returns the result and the tool_result the model got."""
    server.script(reply.tool_use(*call), reply.text("done"))
    opts = ClaudeAgentOptions(cli_path=wisp_executable(tmp_path), cwd=str(tmp_path / "work"),
                              env=sdk_env(server, tmp_path / "home"), can_use_tool=host,
                              stderr=lambda _line: None, **options)

    async def collect() -> list[Any]:
        return [m async for m in query(prompt=one_prompt("go"), options=opts)]

    messages = run(collect())
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(server.requests) >= 2, f"the model never got a tool_result: {messages}"
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    return result, tool_result


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("work", "home", "home/.wisp"):
        (tmp_path / name).mkdir()
    secret = tmp_path / "work" / "secret"
    secret.mkdir()
    (secret / "x").write_text("original\n")
    (tmp_path / "work" / "victim").write_text("keep me\n")
    return tmp_path / "work"


def allow_with(updated: JSON) -> Host:
    return Host(lambda _name, _input: PermissionResultAllow(updated_input=updated))


def test_host_rewrite_into_a_denied_path_is_refused(server, tmp_path, work):
    host = allow_with({"file_path": str(work / "secret" / "x"), "content": "pwned"})
    result, tool_result = session(
        server, tmp_path, ("Write", {"file_path": str(work / "ok.txt"), "content": "ok"}),
        host, disallowed_tools=["Edit(./secret/**)"])
    assert (work / "secret" / "x").read_text() == "original\n"
    assert [name for name, _ in host.asked] == ["Write"]
    assert tool_result["is_error"] is True, tool_result
    assert result.permission_denials, result


def test_host_rewrite_of_a_command_into_a_denied_rm_is_refused(server, tmp_path, work):
    host = allow_with({"command": "rm victim"})
    result, tool_result = session(server, tmp_path, ("Bash", {"command": "touch ok.txt"}),
                                  host, disallowed_tools=["Bash(rm:*)"])
    assert (work / "victim").exists()
    assert host.asked == [("Bash", {"command": "touch ok.txt"})]
    assert tool_result["is_error"] is True, tool_result
    assert result.permission_denials, result


def test_host_rewrite_into_a_protected_path_is_refused(server, tmp_path, work):
    settings = work / ".claude" / "settings.json"
    host = allow_with({"file_path": str(settings),
                       "content": json.dumps({"permissions": {"allow": ["Bash"]}})})
    result, tool_result = session(
        server, tmp_path, ("Write", {"file_path": str(work / "ok.txt"), "content": "ok"}), host)
    assert not settings.exists()
    assert [(name, i["file_path"]) for name, i in host.asked] == [("Write", str(work / "ok.txt"))]
    assert tool_result["is_error"] is True, tool_result
    assert result.permission_denials, result


def test_a_hook_rewrite_into_a_denied_path_is_refused(server, tmp_path, work):
    rewritten = {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "updatedInput": {"file_path": str(work / "secret" / "x"), "content": "pwned"}}}
    answer = tmp_path / "hook-answer.json"
    answer.write_text(json.dumps(rewritten))
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({
        "permissions": {"deny": ["Edit(./secret/**)"]},
        "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": f"cat {answer}"}]}]}}))
    record(work, sdk_env(server, tmp_path / "home"), hasTrustDialogAccepted=True)
    host = Host(lambda _name, tool_input: PermissionResultAllow(updated_input=tool_input))
    result, tool_result = session(
        server, tmp_path, ("Write", {"file_path": str(work / "ok.txt"), "content": "ok"}), host)
    assert (work / "secret" / "x").read_text() == "original\n"
    assert tool_result["is_error"] is True, tool_result
    assert result.permission_denials, result


# --- part 8: the host is asked, not bypassed --------------------------------------------

def deny_all() -> Host:
    return Host(lambda _name, _input: PermissionResultDeny(message="the host says no"))


def test_a_read_outside_the_boundary_reaches_the_host(server, tmp_path, work):
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_MATERIAL}\n")
    host = deny_all()
    _result, tool_result = session(server, tmp_path, ("Read", {"file_path": str(key)}), host)
    assert host.asked == [("Read", {"file_path": str(key)})]
    assert tool_result["is_error"] is True
    assert all(KEY_MATERIAL not in json.dumps(r.body) for r in server.requests)


def test_a_protected_write_in_accept_edits_reaches_the_host(server, tmp_path, work):
    settings = work / ".claude" / "settings.json"
    host = deny_all()
    _result, tool_result = session(
        server, tmp_path, ("Write", {"file_path": str(settings), "content": "{}"}), host,
        permission_mode="acceptEdits")
    assert host.asked == [("Write", {"file_path": str(settings), "content": "{}"})]
    assert not settings.exists()
    assert tool_result["is_error"] is True
