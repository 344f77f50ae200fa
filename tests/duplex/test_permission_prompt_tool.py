"""`--permission-prompt-tool` naming an MCP tool instead of `stdio` (docs/protocol.md, "Requests
wisp sends to the host")."""

from __future__ import annotations

import json

from tests.duplex.test_mcp_message import PY_CONFIG, rpc_result
from wisp.testing import reply

MISSING = (
    "MCP tool mcp__nope__tool (passed via --permission-prompt-tool) not found. "
    "Available MCP tools: none"
)


def test_print_mode_missing_tool_fails_when_first_needed(wisp, server):
    target = wisp.cwd / "x.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "x"}), reply.text("never")
    )
    run = wisp("-p", "x", "--output-format", "json", "--permission-prompt-tool", "mcp__nope__tool")
    assert run.returncode == 1
    assert run.stderr.strip() == f"Error: {MISSING}"
    assert run.stdout == ""
    assert len(server.requests) == 1 and not target.exists()


def test_print_mode_run_that_never_asks_is_fine(wisp, server):
    server.script(reply.text("hello"))
    run = wisp("-p", "hi", "--permission-prompt-tool", "mcp__nope__tool")
    assert run.returncode == 0 and run.stdout == "hello\n"


def test_duplex_missing_tool_ends_with_an_error_result_and_exit_1(duplex, server, wisp):
    server.script(reply.tool_use("Write", {"file_path": str(wisp.cwd / "x"), "content": "x"}))
    proc = duplex("--permission-prompt-tool", "mcp__nope__tool")
    proc.user("write")
    result = proc.wait_frame("result")
    assert result["is_error"] is True and result["errors"] == [MISSING]
    assert proc.proc.wait(10) == 1  # without waiting for stdin to close
    assert proc.finish() == 1
    assert f"Error: {MISSING}" in proc.stderr


def test_an_sdk_mcp_tool_decides_and_rewrites_the_input(duplex, server, wisp):
    target = wisp.cwd / "decided.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "model\n"}), reply.text("ok")
    )
    proc = duplex("--mcp-config", PY_CONFIG, "--permission-prompt-tool", "mcp__calc__approve")
    proc.user("write")
    for count in (1, 2, 3):  # the handshake, listing an `approve` tool
        ask = proc.wait_request("mcp_message", count=count)
        message = ask["request"]["message"]
        if message["method"] == "tools/list":
            proc.answer(
                ask,
                rpc_result(
                    message, {"tools": [{"name": "approve", "inputSchema": {"type": "object"}}]}
                ),
            )
        else:
            proc.answer(ask, rpc_result(message, {}))
    call = proc.wait_request("mcp_message", count=4)
    arguments = call["request"]["message"]["params"]["arguments"]
    assert arguments["tool_name"] == "Write"
    assert arguments["input"]["content"] == "model\n"
    decision = {"behavior": "allow", "updatedInput": {**arguments["input"], "content": "tool\n"}}
    proc.answer(
        call,
        rpc_result(
            call["request"]["message"],
            {"content": [{"type": "text", "text": json.dumps(decision)}]},
        ),
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert target.read_text() == "tool\n"
