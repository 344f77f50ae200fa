"""An MCP server asks the user mid-call (`elicitation/create`): wisp declares the
capability, asks its host with an `elicitation` control request (a form with its schema,
or a URL), and hands the server the host's answer; with no host to ask (print mode), the
answer is a cancel, as the reference's (measured: print mode, and an official Python SDK
host, which has no handler)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.mcp.conftest import mcp_config
from wisp.testing import reply

SERVER = Path(__file__).resolve().parent / "elicit_server.py"
CONFIG = mcp_config(elicit={"command": sys.executable, "args": [str(SERVER)]})


def _tool_answer(frames: list[dict]) -> dict:
    result = next(f for f in frames if f.get("type") == "user")["message"]["content"][0]
    return json.loads(result["content"][0]["text"])


def test_a_form_elicitation_reaches_the_host_and_its_answer_the_server(duplex, server):
    server.script(reply.tool_use("mcp__elicit__ask", {}), reply.text("thanks"))
    proc = duplex("--mcp-config", CONFIG, "--allowedTools", "mcp__elicit")
    proc.initialize()
    proc.user("who am I")
    asked = proc.wait_request("elicitation")
    assert asked["request"] == {
        "subtype": "elicitation", "mcp_server_name": "elicit", "message": "Who are you?",
        "mode": "form", "requested_schema": {"type": "object", "properties": {
            "name": {"type": "string"}}, "required": ["name"]}, "property_order": ["name"]}
    proc.answer(asked, {"action": "accept", "content": {"name": "Ada"}})
    proc.wait_frame("result")
    assert proc.finish() == 0
    seen = _tool_answer(proc.frames)
    assert seen == {"answer": {"action": "accept", "content": {"name": "Ada"}},
                    "declared": {"roots": {"listChanged": True},
                                 "elicitation": {"form": {}, "url": {}}}}


def test_a_url_elicitation_and_a_host_that_declines(duplex, server):
    server.script(reply.tool_use("mcp__elicit__ask", {"url": True}), reply.text("ok"))
    proc = duplex("--mcp-config", CONFIG, "--allowedTools", "mcp__elicit")
    proc.initialize()
    proc.user("sign in")
    asked = proc.wait_request("elicitation")
    assert (asked["request"]["mode"], asked["request"]["url"],
            asked["request"]["elicitation_id"]) == ("url", "https://example.test/login", "e-1")
    proc.answer(asked, {"action": "decline"})
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert _tool_answer(proc.frames)["answer"] == {"action": "decline"}


def test_with_no_host_the_elicitation_is_cancelled(wisp, server):
    server.script(reply.tool_use("mcp__elicit__ask", {}), reply.text("ok"))
    run = wisp("-p", "who", "--output-format", "stream-json", "--verbose",
               "--mcp-config", CONFIG, "--allowedTools", "mcp__elicit")
    assert run.returncode == 0, run.stderr
    assert _tool_answer(run.frames)["answer"] == {"action": "cancel"}
