"""The official Python SDK names remote servers in `mcp_servers` (one streamable HTTP,
one legacy SSE); wisp connects to both and runs their tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.mcp.conftest import needs_mcp
from tests.mcp.remote_servers import remote_app, served
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
def test_the_sdk_calls_tools_of_http_and_sse_servers(server, tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    server.script(reply.tool_use("mcp__web__add", {"a": 20, "b": 22}),
                  reply.tool_use("mcp__old__echo_header", {"name": "x-via"}),
                  reply.text("both ran"))
    with served(remote_app("http")) as web, served(remote_app("sse")) as old:
        options = ClaudeAgentOptions(
            cli_path=wisp_executable(tmp_path), cwd=str(work), env=sdk_env(server, home),
            mcp_servers={"web": {"type": "http", "url": web.url("/mcp")},
                         "old": {"type": "sse", "url": old.url("/sse"),
                                 "headers": {"X-Via": "sdk"}}},
            allowed_tools=["mcp__web", "mcp__old"])

        async def scenario() -> tuple[Any, list[Any]]:
            async with ClaudeSDKClient(options) as client:
                status = await client.get_mcp_status()
                await client.query("use both")
                return status, [m async for m in client.receive_response()]

        status, messages = asyncio.run(asyncio.wait_for(scenario(), 60))
    rows = {row["name"]: row for row in status["mcpServers"]}
    assert {name: (row["status"], row["transport"]) for name, row in rows.items()} == {
        "web": ("connected", "http"), "old": ("connected", "sse")}
    assert {t["name"] for t in rows["old"]["tools"]} == {"add", "echo_header", "wait"}
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert {"mcp__web__add", "mcp__old__echo_header"} <= set(init.data["tools"])
    result = next(m for m in messages if isinstance(m, ResultMessage))
    assert result.result == "both ran" and result.is_error is False
    added = server.requests[1].body["messages"][-1]["content"][0]
    assert added["content"] == [{"type": "text", "text": "42"}]
    echoed = server.requests[2].body["messages"][-1]["content"][0]
    assert echoed["content"] == [{"type": "text", "text": "x-via=sdk"}]
