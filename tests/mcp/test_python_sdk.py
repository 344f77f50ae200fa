"""The official Python SDK passes a stdio server in `--mcp-config`; wisp runs it."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from tests.mcp.conftest import CALC, gone, needs_mcp, pids
from tests.sdk.conftest import sdk_env, wisp_executable
from wisp.testing import reply

pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
)


@needs_mcp
def test_the_sdk_calls_a_stdio_server_tool(server, tmp_path, pid_file):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    server.script(reply.tool_use("mcp__calc__add", {"a": 20, "b": 22}), reply.text("42 it is"))
    calc = {"command": sys.executable, "args": [str(CALC)],
            "env": {"CALC_PID_FILE": str(pid_file)}}
    options = ClaudeAgentOptions(
        cli_path=wisp_executable(tmp_path), cwd=str(work), env=sdk_env(server, home),
        mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])

    async def scenario() -> tuple[Any, list[Any]]:
        async with ClaudeSDKClient(options) as client:
            status = await client.get_mcp_status()
            await client.query("add 20 and 22")
            return status, [m async for m in client.receive_response()]

    status, messages = asyncio.run(asyncio.wait_for(scenario(), 60))
    [calc_status] = status["mcpServers"]
    assert calc_status["status"] == "connected"
    assert {t["name"] for t in calc_status["tools"]} == {"add", "peek"}
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "mcp__calc__add" in init.data["tools"]
    result = next(m for m in messages if isinstance(m, ResultMessage))
    assert result.result == "42 it is" and result.is_error is False
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["content"] == [{"type": "text", "text": "42"}]
    assert all(gone(pid) for pid in pids(pid_file))
