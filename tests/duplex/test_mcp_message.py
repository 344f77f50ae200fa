"""SDK-hosted MCP servers over `mcp_message`: the handshake when no manifest came
(Python), manifests from initialize (TypeScript), and tools offered as mcp__server__tool."""

from __future__ import annotations

import json

import pytest

from wisp.testing import reply

PY_CONFIG = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
ADD = {
    "name": "add",
    "description": "Add two numbers",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "calc", "version": "1.0.0"},
}


def rpc_result(message, result):
    return {"mcp_response": {"jsonrpc": "2.0", "id": message.get("id"), "result": result}}


def serve_handshake(proc):
    """Plays the Python SDK's in-process server for the handshake; returns the methods."""
    methods = []
    for count in (1, 2, 3):
        ask = proc.wait_request("mcp_message", count=count)
        assert ask["request"]["server_name"] == "calc"
        message = ask["request"]["message"]
        methods.append(message["method"])
        if message["method"] == "initialize":
            proc.answer(ask, rpc_result(message, INIT_RESULT))
        elif message["method"] == "notifications/initialized":
            proc.answer(ask, {"mcp_response": {"jsonrpc": "2.0", "result": {}}})
        else:
            proc.answer(ask, rpc_result(message, {"tools": [ADD]}))
    return methods


def test_python_style_handshake_then_a_tool_call(duplex, server):
    server.script(reply.tool_use("mcp__calc__add", {"a": 1, "b": 2}), reply.text("three"))
    proc = duplex("--mcp-config", PY_CONFIG, "--allowedTools", "mcp__calc__add")
    proc.initialize()
    proc.user("add 1 and 2")
    assert serve_handshake(proc) == ["initialize", "notifications/initialized", "tools/list"]
    init = proc.wait_frame("system", "init")
    assert "mcp__calc__add" in init["tools"]
    assert init["mcp_servers"] == [{"name": "calc", "status": "connected", "source": "sdk"}]
    call = proc.wait_request("mcp_message", count=4)
    message = call["request"]["message"]
    assert message["method"] == "tools/call"
    assert message["params"] == {"name": "add", "arguments": {"a": 1, "b": 2}}
    proc.answer(call, rpc_result(message, {"content": [{"type": "text", "text": "3"}]}))
    assert proc.wait_frame("result")["result"] == "three"
    assert proc.finish() == 0
    offered = [t["name"] for t in server.requests[0].body["tools"]]
    assert "mcp__calc__add" in offered
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert tool_result["content"] == [{"type": "text", "text": "3"}]


def test_typescript_manifests_skip_the_handshake(duplex, server):
    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 2}), reply.text("four"))
    proc = duplex("--allowedTools=mcp__calc")
    manifests = {"calc": {"initializeResult": INIT_RESULT, "toolsListResult": {"tools": [ADD]}}}
    proc.initialize(sdkMcpServers=["calc"], sdkMcpServerManifests=manifests)
    status = proc.call("mcp_status")["response"]["mcpServers"]
    assert status[0]["name"] == "calc" and status[0]["status"] == "connected"
    assert status[0]["serverInfo"] == {"name": "calc", "version": "1.0.0"}
    proc.user([{"type": "text", "text": "add"}])
    call = proc.wait_request("mcp_message")
    assert call["request"]["message"]["method"] == "tools/call"
    proc.answer(
        call, rpc_result(call["request"]["message"], {"content": [{"type": "text", "text": "4"}]})
    )
    assert proc.wait_frame("result")["result"] == "four"
    assert proc.finish() == 0


def test_typescript_servers_without_a_manifest_get_the_handshake(duplex):
    proc = duplex()
    request_id = proc.request("initialize", hooks=None, sdkMcpServers=["calc"])
    assert serve_handshake(proc) == ["initialize", "notifications/initialized", "tools/list"]
    assert proc.response_to(request_id)["subtype"] == "success"
    status = proc.call("mcp_status")["response"]["mcpServers"]
    assert status[0]["status"] == "connected"
    assert status[0]["tools"] == [{"name": "add", "annotations": {}}]
    assert "config" not in status[0]  # an SDK-hosted server's config stays with its host
    assert (status[0]["transport"], status[0]["source"]) == ("sdk", "sdk")
    assert proc.finish() == 0


@pytest.mark.parametrize("style", ["python", "typescript"])
def test_an_unknown_server_is_reported_failed_not_fatal(duplex, server, style):
    """Python answers success with a JSON-RPC error; TS answers a control error."""
    server.script(reply.text("still fine"))
    proc = duplex("--mcp-config", PY_CONFIG)
    proc.user("hi")
    ask = proc.wait_request("mcp_message")
    if style == "python":
        proc.answer(
            ask,
            {
                "mcp_response": {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "error": {"code": -32601, "message": "Server 'calc' not found"},
                }
            },
        )
    else:
        proc.answer(ask, error="SDK MCP server not found: calc")
    assert proc.wait_frame("result")["result"] == "still fine"
    status = proc.call("mcp_status")["response"]["mcpServers"][0]
    assert status["status"] == "failed" and "not found" in status["error"]
    assert proc.wait_frame("system", "init")["mcp_servers"][0]["status"] == "failed"
    assert proc.finish() == 0


def test_toggle_removes_and_restores_the_tools(duplex, server):
    server.script(reply.text("a"), reply.text("b"))
    proc = duplex()
    manifests = {"calc": {"initializeResult": INIT_RESULT, "toolsListResult": {"tools": [ADD]}}}
    proc.initialize(sdkMcpServers=["calc"], sdkMcpServerManifests=manifests)
    assert proc.call("mcp_toggle", serverName="calc", enabled=False)["subtype"] == "success"
    proc.user("one")
    proc.wait_frame("result")
    assert proc.call("mcp_toggle", serverName="calc", enabled=True)["subtype"] == "success"
    proc.user("two")
    proc.wait_frame("result", count=2)
    assert proc.finish() == 0
    first, second = (r.body["tools"] for r in server.requests)
    assert "mcp__calc__add" not in [t["name"] for t in first]
    assert "mcp__calc__add" in [t["name"] for t in second]


def test_a_stdio_server_that_cannot_start_is_listed_as_failed(duplex):
    """Stdio servers proper are tested in tests/mcp."""
    config = json.dumps({"mcpServers": {"files": {"command": "some-mcp-server"}}})
    proc = duplex("--mcp-config", config)
    status = proc.call("mcp_status")["response"]["mcpServers"]
    assert status[0]["name"] == "files" and status[0]["status"] == "failed"
    assert "could not start some-mcp-server" in status[0]["error"]
    assert proc.finish() == 0


def test_mcp_status_connects_a_python_sdk_server_to_report_its_real_state(duplex):
    """Python names its servers in --mcp-config; they connect before the first turn, or
    when the host asks for their status, which then lists their tools."""
    proc = duplex("--mcp-config", PY_CONFIG)
    request_id = proc.request("mcp_status")
    assert serve_handshake(proc) == ["initialize", "notifications/initialized", "tools/list"]
    [row] = proc.response_to(request_id)["response"]["mcpServers"]
    assert (row["name"], row["status"], row["transport"]) == ("calc", "connected", "sdk")
    assert row["tools"] == [{"name": "add", "annotations": {}}]
    assert row["serverInfo"] == {"name": "calc", "version": "1.0.0"}
    assert proc.finish() == 0


def test_mcp_set_servers_replaces_the_sdk_servers_and_connects_the_new_ones(duplex, server):
    server.script(reply.tool_use("mcp__calc__add", {"a": 1, "b": 2}), reply.text("three"))
    proc = duplex("--allowedTools=mcp__calc")
    manifests = {"old": {"initializeResult": INIT_RESULT, "toolsListResult": {"tools": []}}}
    proc.initialize(sdkMcpServers=["old"], sdkMcpServerManifests=manifests)
    request_id = proc.request("mcp_set_servers", servers={"calc": {"type": "sdk",
                                                                   "name": "calc"}})
    assert serve_handshake(proc) == ["initialize", "notifications/initialized", "tools/list"]
    answer = proc.response_to(request_id)["response"]
    assert answer == {"added": ["calc"], "removed": ["old"], "errors": {}}
    again = proc.call("mcp_set_servers", servers={"calc": {"type": "sdk", "name": "calc"}})
    assert again["response"] == {"added": [], "removed": [], "errors": {}}
    proc.user("add")
    call = proc.wait_request("mcp_message", count=4)
    assert call["request"]["message"]["method"] == "tools/call"
    proc.answer(call, rpc_result(call["request"]["message"],
                                 {"content": [{"type": "text", "text": "3"}]}))
    assert proc.wait_frame("result")["result"] == "three"
    bad = proc.call("mcp_set_servers", servers=["calc"])
    assert bad["error"] == "mcp_set_servers: servers must be an object of config objects"
    assert proc.finish() == 0
