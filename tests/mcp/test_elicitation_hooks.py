"""Elicitation as the reference routes it, against a server written with the `mcp`
package (tests/mcp/elicit_mcp_server.py): `Elicitation` hooks, matched on the server's
name, may answer before anyone is asked (the official Python SDK's way, since it has no
elicitation callback) or block it (a decline); `ElicitationResult` hooks see the answer
and may change or block it. Through settings command hooks in print mode and through the
official Python SDK's hook callbacks."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import mcp_config, needs_mcp
from wisp.testing import ScriptedServer, reply

SERVER = Path(__file__).resolve().parent / "elicit_mcp_server.py"
CONFIG = mcp_config(elicit={"command": sys.executable, "args": [str(SERVER)]})
pytestmark = needs_mcp


def _said(frames: list[dict]) -> Any:
    """What the MCP tool returned: the server's view of the answer."""
    result = next(f for f in frames if f.get("type") == "user")["message"]["content"][0]
    content = result["content"]
    return json.loads(content if isinstance(content, str) else content[0]["text"])


def _hook(event: str, answer: dict) -> dict:
    command = f"cat > /dev/null; echo {shlex.quote(json.dumps(answer))}"
    return {event: [{"matcher": "elicit", "hooks": [{"type": "command", "command": command}]}]}


def _run(wisp, tool: str, hooks: dict) -> Any:
    run = wisp("-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config",
               CONFIG, "--allowedTools", "mcp__elicit", "--settings",
               json.dumps({"hooks": hooks}))
    assert run.returncode == 0, run.stderr
    return _said(run.frames)


def test_an_elicitation_hook_answers_the_form(wisp, server):
    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("hello Ada"))
    answer = {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                                     "content": {"name": "Ada"}}}
    assert _run(wisp, "who", _hook("Elicitation", answer)) == {
        "action": "accept", "data": {"name": "Ada"}}


def test_a_result_hook_that_blocks_turns_the_answer_into_a_decline(wisp, server):
    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("ok"))
    accept = {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                                     "content": {"name": "Ada"}}}
    hooks = {**_hook("Elicitation", accept),
             **_hook("ElicitationResult", {"decision": "block", "reason": "not today"})}
    assert _run(wisp, "who", hooks) == {"action": "decline", "data": None}


def test_a_hook_for_another_server_is_not_asked_and_print_mode_cancels(wisp, server):
    server.script(reply.tool_use("mcp__elicit__login", {}), reply.text("ok"))
    accept = {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept"}}
    hooks = {"Elicitation": [{"matcher": "other", "hooks": [
        {"type": "command", "command": f"echo {shlex.quote(json.dumps(accept))}"}]}]}
    assert _run(wisp, "login", hooks) == {"action": "cancel"}


def test_the_official_python_sdk_answers_through_its_hook_callbacks(
        server: ScriptedServer, tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk", reason="bash scripts/install-sdk-deps")
    from tests.sdk.conftest import sdk_env, wisp_executable

    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("hi"),
                  reply.tool_use("mcp__elicit__login", {}), reply.text("signed in"))
    seen: list[dict] = []

    async def answer(hook_input: Any, tool_use_id: Any, context: Any) -> Any:
        seen.append(dict(hook_input))
        content = {"name": "Grace"} if hook_input["mode"] == "form" else None
        return {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                                       **({"content": content} if content else {})}}

    async def result(hook_input: Any, tool_use_id: Any, context: Any) -> Any:
        seen.append(dict(hook_input))
        return {}

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    opts = sdk.ClaudeAgentOptions(
        cli_path=wisp_executable(tmp_path), cwd=str(work), env=sdk_env(server, home),
        mcp_servers={"elicit": {"command": sys.executable, "args": [str(SERVER)]}},
        allowed_tools=["mcp__elicit"],
        hooks={"Elicitation": [sdk.HookMatcher(matcher="elicit", hooks=[answer])],
               "ElicitationResult": [sdk.HookMatcher(hooks=[result])]})  # type: ignore[dict-item]

    async def converse() -> list[Any]:
        async with sdk.ClaudeSDKClient(opts) as client:
            out: list[Any] = []
            for prompt in ("who am I", "sign me in"):
                await client.query(prompt)
                out.extend([m async for m in client.receive_response()])
            return out

    messages = asyncio.run(asyncio.wait_for(converse(), 90))
    said = [json.loads(b.content if isinstance(b.content, str) else b.content[0]["text"])
            for m in messages if isinstance(m, sdk.UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, sdk.ToolResultBlock)]
    assert said == [{"action": "accept", "data": {"name": "Grace"}}, {"action": "accept"}]
    form, form_result, url, url_result = seen
    assert (form["hook_event_name"], form["mcp_server_name"], form["message"],
            form["mode"]) == ("Elicitation", "elicit", "Who are you?", "form")
    assert form["requested_schema"]["properties"]["name"]["type"] == "string"
    assert (form_result["hook_event_name"], form_result["action"],
            form_result["content"]) == ("ElicitationResult", "accept", {"name": "Grace"})
    assert (url["mode"], url["url"], url["elicitation_id"]) == (
        "url", "https://example.test/login", "e-7")
    assert (url_result["mode"], url_result["elicitation_id"]) == ("url", "e-7")


def test_a_url_elicitation_the_server_completes_is_reported(wisp, server):
    """`notifications/elicitation/complete` from the server: `system/elicitation_complete`
    (mcp_server_name, elicitation_id), as the reference reports it."""
    server.script(reply.tool_use("mcp__elicit__login", {}), reply.text("signed in"))
    accept = {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept"}}
    run = wisp("-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config",
               CONFIG, "--allowedTools", "mcp__elicit", "--settings",
               json.dumps({"hooks": _hook("Elicitation", accept)}))
    assert run.returncode == 0, run.stderr
    assert _said(run.frames) == {"action": "accept"}
    [done] = [f for f in run.frames if f.get("subtype") == "elicitation_complete"]
    assert (done["mcp_server_name"], done["elicitation_id"]) == ("elicit", "e-7")


def test_an_official_python_sdk_host_without_a_hook_gets_a_cancel(
        server: ScriptedServer, tmp_path: Path) -> None:
    """The Python SDK answers the `elicitation` request with an error (it has no handler);
    the server then gets `cancel`, as the reference gives it (measured)."""
    sdk = pytest.importorskip("claude_agent_sdk", reason="bash scripts/install-sdk-deps")
    from tests.sdk.conftest import sdk_env, wisp_executable

    server.script(reply.tool_use("mcp__elicit__who", {}), reply.text("hi"))
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    opts = sdk.ClaudeAgentOptions(
        cli_path=wisp_executable(tmp_path), cwd=str(work), env=sdk_env(server, home),
        mcp_servers={"elicit": {"command": sys.executable, "args": [str(SERVER)]}},
        allowed_tools=["mcp__elicit"])

    async def ask() -> list[Any]:
        return [m async for m in sdk.query(prompt="who am I", options=opts)]

    messages = asyncio.run(asyncio.wait_for(ask(), 90))
    [said] = [json.loads(b.content if isinstance(b.content, str) else b.content[0]["text"])
              for m in messages if isinstance(m, sdk.UserMessage)
              and isinstance(m.content, list)
              for b in m.content if isinstance(b, sdk.ToolResultBlock)]
    assert said == {"action": "cancel", "data": None}
