"""`wisp.sdk.elicitation_hooks`: a plain Python callback answers MCP servers that ask the
user mid-call (a form, a URL), in-process and through the `wisp` executable, against a
server written with the `mcp` package. Without it, the SDK host's `elicitation` request
is declined."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.mcp.conftest import needs_mcp
from wisp.sdk import (
    ClaudeSDKClient,
    ElicitationAnswer,
    ElicitationRequest,
    ToolResultBlock,
    UserMessage,
    elicitation_hooks,
)
from wisp.testing import ScriptedServer, reply

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "elicit_mcp_server.py"
MCP = {"elicit": {"command": sys.executable, "args": [str(SERVER)]}}
pytestmark = needs_mcp


async def _converse(options: Any, prompts: list[str]) -> list[Any]:
    async with ClaudeSDKClient(options) as client:
        out: list[Any] = []
        for prompt in prompts:
            await client.query(prompt)
            out.extend([m async for m in client.receive_response()])
        return out


def _said(messages: list[Any]) -> list[Any]:
    return [json.loads(b.content if isinstance(b.content, str) else b.content[0]["text"])
            for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)]


def test_a_callback_answers_a_form_and_a_url(server: ScriptedServer, make_options: Any) -> None:
    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("hi"),
                  reply.tool_use("mcp__elicit__login", {}), reply.text("ok"))
    asked: list[ElicitationRequest] = []

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        if request["mode"] == "url":
            return {"action": "cancel"}
        return {"action": "accept", "content": {"name": "Ada"}}

    options = make_options(mcp_servers=MCP, allowed_tools=["mcp__elicit"],
                           hooks=elicitation_hooks(ask, server="elicit"))
    messages = asyncio.run(asyncio.wait_for(_converse(options, ["who", "login"]), 90))
    assert _said(messages) == [{"action": "accept", "data": {"name": "Ada"}},
                               {"action": "cancel"}]
    form, url = asked
    assert (form["server_name"], form["message"], form["mode"]) == (
        "elicit", "Who are you?", "form")
    assert form["requested_schema"]["required"] == ["name"]
    assert url == {"server_name": "elicit", "message": "Sign in, please", "mode": "url",
                   "url": "https://example.test/login", "elicitation_id": "e-7"}


def test_a_callback_that_passes_leaves_it_to_the_host_which_declines(
        server: ScriptedServer, make_options: Any) -> None:
    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("hi"))

    async def passes(request: ElicitationRequest) -> None:
        return None

    options = make_options(mcp_servers=MCP, allowed_tools=["mcp__elicit"],
                           hooks=elicitation_hooks(passes))
    messages = asyncio.run(asyncio.wait_for(_converse(options, ["who"]), 90))
    assert _said(messages) == [{"action": "decline", "data": None}]
