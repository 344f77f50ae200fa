"""The official Python SDK drives `wisp` through hook answers that end a run, the budget,
and MCP servers added at run time. The reference's behaviour in the same cases is
recorded in tests/fixtures/reference/ (see tests/reference_parity)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from wisp.testing import ScriptedServer, reply

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    query,
)

T = TypeVar("T")
CALC = Path(__file__).resolve().parents[1] / "mcp" / "calc_server.py"


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def options(cli: str, work: Path, env: dict[str, str], **kwargs: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=cli, cwd=str(work), env=env, stderr=lambda _: None,
                              **kwargs)


async def one_prompt(text: str) -> Any:
    yield {"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": None, "session_id": ""}


async def collect(prompt: Any, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


def only_result(messages: list[Any]) -> ResultMessage:
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    return result


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)]


def test_continue_false_from_pre_tool_use_ends_the_run_after_the_tool(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    """The tool still runs; no further model call; a successful result, `hook_stopped`."""
    server.script(reply.tool_use("Bash", {"command": "echo ran"}), reply.text("never sent"))

    async def stop(hook_input: Any, tool_use_id: Any, context: Any) -> Any:
        return {"continue_": False, "stopReason": "enough for today"}

    opts = options(cli, work, env, hooks={"PreToolUse": [HookMatcher(hooks=[stop])]})
    messages = run(collect(one_prompt("go"), opts))
    result = only_result(messages)
    assert (result.subtype, result.is_error, result.terminal_reason) == (
        "success", False, "hook_stopped")
    assert result.num_turns == 2 and result.stop_reason == "tool_use"
    assert [r.content for r in tool_results(messages)] == ["ran"]
    assert len(server.requests) == 1


def test_user_prompt_submit_block_sends_nothing_and_succeeds(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    seen: list[str] = []

    async def guard(hook_input: Any, tool_use_id: Any, context: Any) -> Any:
        seen.append(hook_input["prompt"])
        return {"decision": "block", "reason": "no secrets in prompts"}

    opts = options(cli, work, env, hooks={"UserPromptSubmit": [HookMatcher(hooks=[guard])]})
    messages = run(collect(one_prompt("the password is hunter2"), opts))
    result = only_result(messages)
    expected = ("UserPromptSubmit operation blocked by hook:\nno secrets in prompts\n\n"
                "Original prompt: the password is hunter2")
    assert (result.subtype, result.is_error, result.result) == ("success", False, expected)
    assert result.num_turns == 0
    [notice] = [m for m in messages if isinstance(m, SystemMessage)
                and m.subtype == "informational"]
    assert notice.data["content"] == expected and notice.data["level"] == "warning"
    assert notice.data["prompt_submit_outcome"] == {
        "kind": "blocked_by_hook", "prompt_kept": False, "reason": "no secrets in prompts"}
    assert seen == ["the password is hunter2"]
    assert server.requests == []


def test_a_single_turn_over_budget_ends_with_the_budget_error(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    """The budget is checked after the call: the one answer overshoots, its tool never runs."""
    server.script(reply.tool_use("Bash", {"command": "touch never"}), reply.text("never sent"))
    opts = options(cli, work, env, max_budget_usd=0.0001)

    async def scenario() -> list[Any]:
        async with ClaudeSDKClient(opts) as client:
            await client.query("go")
            return [m async for m in client.receive_response()]

    result = only_result(run(scenario()))
    assert (result.subtype, result.is_error, result.num_turns) == (
        "error_max_budget_usd", True, 1)
    assert result.errors == ["Reached maximum budget ($0.0001)"]
    assert result.stop_reason == "tool_use" and result.result is None
    assert not (work / "never").exists()
    assert len(server.requests) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="a stdio MCP server over pipes")
def test_mcp_set_servers_adds_a_server_whose_tool_then_runs(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    """This SDK has no `set_mcp_servers` method yet (the TypeScript one's `setMcpServers`):
    its control request goes through the client's request channel."""
    pytest.importorskip("mcp")
    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}), reply.text("five"))
    opts = options(cli, work, env, allowed_tools=["mcp__calc"])
    calc = {"command": sys.executable, "args": [str(CALC)]}

    async def scenario() -> tuple[Any, Any, list[Any]]:
        async with ClaudeSDKClient(opts) as client:
            control = client._query
            assert control is not None
            answer = await control._send_control_request(
                {"subtype": "mcp_set_servers", "servers": {"calc": calc}})
            status = await client.get_mcp_status()
            await client.query("add 2 and 3")
            return answer, status, [m async for m in client.receive_response()]

    answer, status, messages = run(scenario())
    assert answer == {"added": ["calc"], "removed": [], "errors": {}}
    [row] = status["mcpServers"]
    assert (row["name"], row["status"], row["transport"]) == ("calc", "connected", "stdio")
    assert {t["name"] for t in row["tools"]} == {"add", "peek"}
    assert [r.is_error for r in tool_results(messages)] == [False]
    assert only_result(messages).result == "five"
    sent = server.requests[1].body["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and "5" in str(sent["content"])
    assert "mcp__calc__add" in [t["name"] for t in server.requests[0].body["tools"]]
