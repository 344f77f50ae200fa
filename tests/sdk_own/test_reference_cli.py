"""wisp.sdk driving the reference CLI (Claude Code 2.1.332) through `cli_path`, offline,
against the scripted Messages API server. Skipped where the reference isn't installed
(`python bench/run.py --install-reference` puts it in .bench-cache/, or set
WISP_REFERENCE_CLI)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import sdk_env
from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from wisp.testing import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(os.environ.get("WISP_REFERENCE_CLI")
                 or ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude")
pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference CLI not installed")


def options(server: ScriptedServer, tmp_path: Path, **kwargs: Any) -> ClaudeAgentOptions:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {**sdk_env(server, home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    return ClaudeAgentOptions(cli_path=str(REFERENCE), cwd=str(work), env=env, **kwargs)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


def test_one_shot_query_against_the_reference(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(reply.text("hello from the model"))

    async def scenario() -> list[Any]:
        return [m async for m in query(prompt="hi", options=options(server, tmp_path))]

    messages = run(scenario())
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.subtype == "success" and result.result == "hello from the model"
    texts = [b.text for m in messages if isinstance(m, AssistantMessage)
             for b in m.content if isinstance(b, TextBlock)]
    assert texts == ["hello from the model"]


def test_tools_hooks_and_permission_callback_against_the_reference(
        server: ScriptedServer, tmp_path: Path) -> None:
    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    seen: list[tuple[str, str]] = []

    async def pre_tool_use(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(("hook", data["tool_name"]))
        return {}

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen.append(("ask", name))
        return PermissionResultAllow()

    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}), reply.text("five"))
    opts = options(server, tmp_path, mcp_servers={"calc": create_sdk_mcp_server(
        "calc", tools=[add])}, can_use_tool=can_use_tool,
        hooks={"PreToolUse": [HookMatcher(hooks=[pre_tool_use])]})

    async def scenario() -> list[Any]:
        async with ClaudeSDKClient(opts) as client:
            await client.query("add 2 and 3")
            messages = [m async for m in client.receive_response()]
            status = await client.get_mcp_status()
        assert [s["name"] for s in status["mcpServers"]] == ["calc"]
        return messages

    messages = run(scenario())
    results = [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
               for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.content for r in results] == [[{"type": "text", "text": "5"}]]
    assert ("hook", "mcp__calc__add") in seen
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "five"
