"""Reading `--mcp-config` entries (no processes here), the JSON-RPC channel's manners, and
the cost of MCP support for a run that doesn't use it."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.structured.test_import_cost import imported_modules
from wisp.errors import UsageError
from wisp.mcp.client import McpError, McpServer
from wisp.mcp.config import Unavailable, build_server, parse_mcp_configs
from wisp.mcp.jsonrpc import RpcChannel
from wisp.mcp.sdk_bridge import SdkMcpServer
from wisp.mcp.stdio import StdioMcpServer
from wisp.testing import reply
from wisp.tools.base import ToolContext


async def no_send(name: str, message: dict) -> dict:
    raise AssertionError("not reached")


def build(entry: dict, environ: dict | None = None, send=None):
    return build_server("s", entry, send, None, environ or {})


def test_stdio_is_the_default_type_and_variables_are_expanded():
    environ = {"TOKEN": "t0k", "MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": "2500"}
    server = build({"command": "${BIN:-npx}", "args": ["--key=${TOKEN}"],
                    "env": {"API": "${TOKEN}", "MODE": "${MODE:-fast}"}}, environ)
    assert isinstance(server, StdioMcpServer)
    assert (server.command, server.args) == ("npx", ["--key=t0k"])
    assert server.env == {"API": "t0k", "MODE": "fast"}
    assert (server.startup_timeout, server.tool_timeout) == (1.5, 2.5)
    assert server.status_entry()["config"] == {"type": "stdio", "command": "npx",
                                               "args": ["--key=t0k"]}


@pytest.mark.parametrize(("entry", "why"), [
    ({"command": "x", "args": ["${NOPE}"]}, "missing environment variable(s): NOPE"),
    ({"args": ["x"]}, "`command` must be a non-empty string"),
    ({"command": "x", "args": "a b"}, "`args` must be a list of strings"),
    ({"command": "x", "env": {"A": 1}}, "`env` must be an object of strings"),
    ({"type": "ws", "url": "ws://127.0.0.1:1"}, "ws MCP servers are not supported"),
    ({"type": "sdk", "name": "s"}, "only --input-format stream-json has"),
])
def test_an_entry_wisp_cannot_serve_is_failed_with_the_reason(entry, why):
    server = build(entry)
    assert isinstance(server, Unavailable)
    assert server.status == "failed" and why in str(server.error)
    asyncio.run(server.connect())  # a reconnect cannot make it work
    assert server.status == "failed" and why in str(server.error)


def test_sdk_servers_need_the_control_channel():
    assert isinstance(build({"type": "sdk", "name": "s"}, send=no_send), SdkMcpServer)


def test_config_text_and_files(tmp_path):
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"b": {"command": "y"}}}))
    parsed = parse_mcp_configs(('{"mcpServers": {"a": {"command": "x"}}}', str(path)))
    assert parsed == {"a": {"command": "x"}, "b": {"command": "y"}}
    with pytest.raises(UsageError, match="Invalid --mcp-config"):
        parse_mcp_configs(("{nope",))
    with pytest.raises(UsageError, match="Could not read --mcp-config file"):
        parse_mcp_configs((str(tmp_path / "missing.json"),))


def test_the_channel_answers_requests_and_skips_what_it_does_not_know():
    async def scenario() -> tuple[list[dict], list[tuple], dict]:
        written: list[dict] = []
        notes: list[tuple] = []
        channel = RpcChannel(written.append, lambda method, params: notes.append((method, params)))
        pending = asyncio.ensure_future(channel.request({"id": 7, "method": "tools/list"}, 5))
        await asyncio.sleep(0)  # let it write
        channel.feed([{"jsonrpc": "2.0", "id": "p", "method": "ping"},
                      {"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage"},
                      {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"n": 1}},
                      {"jsonrpc": "2.0", "id": 99, "result": {}},  # nobody asked: dropped
                      {"jsonrpc": "2.0", "id": [1], "result": {}},  # not an id: dropped
                      "junk"])
        channel.feed({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}})
        return written, notes, await pending

    written, notes, answer = asyncio.run(scenario())
    assert answer["result"] == {"tools": []}
    assert written[1] == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert written[2]["id"] == 3 and written[2]["error"]["code"] == -32601
    assert notes == [("notifications/progress", {"n": 1})]


def test_the_channel_times_out_and_tells_the_peer_then_fails_for_good():
    async def scenario() -> list[dict]:
        written: list[dict] = []
        channel = RpcChannel(written.append, lambda method, params: None)
        with pytest.raises(McpError, match=r"tools/call timed out after 0\.01 s"):
            await channel.request({"id": 1, "method": "tools/call"}, 0.01)
        waiting = asyncio.ensure_future(channel.request({"id": 2, "method": "x"}, None))
        await asyncio.sleep(0)
        channel.fail(McpError("server exited with code 1"))
        with pytest.raises(McpError, match="exited with code 1"):
            await waiting
        with pytest.raises(McpError, match="exited with code 1"):
            await channel.request({"id": 3, "method": "x"}, None)
        return written

    written = asyncio.run(scenario())
    assert written[1]["method"] == "notifications/cancelled"
    assert written[1]["params"]["requestId"] == 1


class CannedServer(McpServer):
    """The protocol layer over a transport that answers from a table."""

    def __init__(self, name: str, answers: dict[str, dict]) -> None:
        super().__init__(name, "canned")
        self.answers = answers

    async def exchange(self, message: dict, timeout: float | None) -> dict:
        return {"jsonrpc": "2.0", "id": message["id"], "result": self.answers[message["method"]]}

    async def send_notification(self, message: dict) -> None:
        pass


def test_tool_names_fit_the_api_and_resources_become_text(tmp_path):
    tool = {"name": "get file", "inputSchema": {"type": "object"}}
    server = CannedServer("my.files", {
        "initialize": {"serverInfo": {"name": "files"}},
        "tools/list": {"tools": [tool]},
        "tools/call": {"content": [
            {"type": "resource", "resource": {"uri": "file:///a", "text": "contents of a"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]},
    })
    asyncio.run(server.connect())
    assert server.status == "connected"
    [mcp_tool] = server.as_tools()
    assert mcp_tool.name == "mcp__my_files__get_file"
    result = asyncio.run(mcp_tool.run({}, ToolContext(cwd=tmp_path)))
    assert result.content == [{"type": "text", "text": "contents of a"},
                              {"type": "text", "text": "b: file:///b"}]


def test_a_plain_run_does_not_load_mcp_support(wisp, server):
    server.script(reply.text("hi"))
    modules = imported_modules(wisp, "-p", "hi")
    assert "wisp.engine.loop" in modules
    assert not any(m.startswith("wisp.mcp") or m.split(".")[0] == "mcp" for m in modules)
