"""The official Python Agent SDK (claude-agent-sdk) drives the real `wisp` process through
`cli_path`, against the scripted Messages API server. Nothing in the SDK is patched."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from wisp.testing import ScriptedServer, reply

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    create_sdk_mcp_server,
    query,
    tool,
)

T = TypeVar("T")
SANDBOX = {"IS_SANDBOX": "1"}  # bypassPermissions as root


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def options(cli: str, work: Path, env: dict[str, str], **kwargs: Any) -> ClaudeAgentOptions:
    stderr: list[str] = []
    extra_env = kwargs.pop("extra_env", {})
    return ClaudeAgentOptions(
        cli_path=cli, cwd=str(work), env={**env, **extra_env}, stderr=stderr.append, **kwargs
    )


async def collect(prompt: Any, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


async def one_prompt(text: str) -> Any:
    """A streaming prompt: `can_use_tool` needs one."""
    yield {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def result_of(messages: list[Any]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(results) == 1, messages
    return results[0]


def texts(messages: list[Any]) -> list[str]:
    return [
        b.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]


def write_then(server: ScriptedServer, path: Path, content: str = "from the model\n") -> None:
    server.script(
        reply.tool_use("Write", {"file_path": str(path), "content": content}), reply.text("done")
    )


def test_one_shot_query(server, cli, work, env):
    server.script(reply.text("hello from wisp"))
    messages = run(collect("say hi", options(cli, work, env)))
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(work)
    assert texts(messages) == ["hello from wisp"]
    result = result_of(messages)
    assert result.subtype == "success" and result.is_error is False
    assert result.result == "hello from wisp" and result.num_turns == 1
    body = server.requests[0].body
    assert body["messages"] == [{"role": "user", "content": "say hi"}]
    assert body.get("system") in (None, [])  # the SDK's default is an empty system prompt


def test_client_two_turns_in_one_process(server, cli, work, env):
    server.script(reply.text("first"), reply.text("second"))

    async def scenario() -> list[list[Any]]:
        turns = []
        async with ClaudeSDKClient(options(cli, work, env)) as client:
            for prompt in ("one", "two"):
                await client.query(prompt)
                turns.append([m async for m in client.receive_response()])
        return turns

    first, second = run(scenario())
    assert texts(first) == ["first"] and texts(second) == ["second"]
    assert result_of(first).session_id == result_of(second).session_id
    history = server.requests[1].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]


def test_can_use_tool_rewrites_the_input(server, cli, work, env):
    target = work / "perm.txt"
    write_then(server, target)
    seen: list[tuple[str, dict[str, Any], Any]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen.append((name, tool_input, context))
        return PermissionResultAllow(updated_input={**tool_input, "content": "FROM HOST\n"})

    messages = run(collect(one_prompt("write"), options(cli, work, env, can_use_tool=can_use_tool)))
    assert result_of(messages).is_error is False
    assert target.read_text() == "FROM HOST\n"
    [(name, tool_input, context)] = seen
    assert name == "Write" and tool_input["content"] == "from the model\n"
    assert context.tool_use_id and context.blocked_path == str(target)
    assert [s.type for s in context.suggestions] == ["setMode"]


def test_can_use_tool_deny(server, cli, work, env):
    target = work / "denied.txt"
    write_then(server, target)

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultDeny(message="the host says no")

    messages = run(collect(one_prompt("write"), options(cli, work, env, can_use_tool=can_use_tool)))
    assert not target.exists()
    result = result_of(messages)
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "Write"
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["is_error"] is True and tool_result["content"] == "the host says no"


def test_pre_tool_use_hook_denies_a_bash_command(server, cli, work, env):
    marker = work / "must-never-exist"
    server.script(reply.tool_use("Bash", {"command": f"touch {marker}"}), reply.text("ok"))
    calls: list[dict[str, Any]] = []

    async def guard(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        calls.append(hook_input)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "touch is forbidden",
            }
        }

    opts = options(
        cli,
        work,
        env,
        permission_mode="bypassPermissions",
        extra_env=SANDBOX,
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )
    messages = run(collect("run it", opts))
    assert result_of(messages).is_error is False
    assert not marker.exists()
    assert calls[0]["tool_name"] == "Bash" and calls[0]["hook_event_name"] == "PreToolUse"
    assert "touch is forbidden" in str(server.requests[1].body["messages"][-1])


def test_in_process_mcp_tool_result_goes_back_to_the_model(server, cli, work, env):
    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calc = create_sdk_mcp_server("calc", version="1.0.0", tools=[add])
    server.script(reply.tool_use("mcp__calc__add", {"a": 20, "b": 22}), reply.text("42 it is"))
    opts = options(cli, work, env, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    messages = run(collect("add", opts))
    assert "mcp__calc__add" in messages[0].data["tools"]
    assert messages[0].data["mcp_servers"][0]["status"] == "connected"
    assert result_of(messages).result == "42 it is"
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["is_error"] is False
    assert tool_result["content"] == [{"type": "text", "text": "42"}]


def test_interrupt_mid_stream_then_another_turn(server, cli, work, env):
    server.script(
        reply.slow("a very slow answer " * 4, delay_per_event=0.1, chunks=30),
        reply.text("after the interrupt"),
    )

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(
            options(cli, work, env, include_partial_messages=True)
        ) as client:
            await client.query("go slowly")
            first: list[Any] = []
            async for message in client.receive_response():
                first.append(message)
                deltas = [
                    m
                    for m in first
                    if isinstance(m, StreamEvent) and m.event.get("type") == "content_block_delta"
                ]
                if len(deltas) == 2:
                    await client.interrupt()
            await client.query("again")
            second = [m async for m in client.receive_response()]
        return first, second

    first, second = run(scenario())
    interrupted = result_of(first)
    assert interrupted.subtype == "error_during_execution" and interrupted.is_error is True
    assert result_of(second).result == "after the interrupt"
    assert "[Request interrupted by user]" in str(server.requests[1].body["messages"])


def test_set_model_and_set_permission_mode(server, cli, work, env):
    target = work / "accepted.txt"
    server.script(reply.text("on sonnet"))
    write_then(server, target)

    async def scenario() -> list[Any]:
        async with ClaudeSDKClient(options(cli, work, env)) as client:
            await client.set_model("sonnet")
            await client.query("which model?")
            turns = [m async for m in client.receive_response()]
            await client.set_permission_mode("acceptEdits")
            await client.query("write")
            return turns + [m async for m in client.receive_response()]

    messages = run(scenario())
    assert server.requests[0].body["model"] == "claude-sonnet-5-5"
    assert target.read_text() == "from the model\n"  # the Write ran without a prompt
    assert not [m for m in messages if isinstance(m, ResultMessage) and m.permission_denials]


def test_output_format_json_schema_gives_structured_output(server, cli, work, env):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    server.script(reply.tool_use("StructuredOutput", {"answer": 42}))
    opts = options(cli, work, env, output_format={"type": "json_schema", "schema": schema})
    messages = run(collect("what is the answer?", opts))
    result = result_of(messages)
    assert result.is_error is False
    assert result.structured_output == {"answer": 42}
    offered = [t["name"] for t in server.requests[0].body["tools"]]
    assert "StructuredOutput" in offered
