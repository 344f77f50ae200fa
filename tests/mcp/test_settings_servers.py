"""MCP servers named in settings (`mcpServers`, any source, local over project over user),
remote ones included: they start like `--mcp-config` servers, `--mcp-config` wins on a
name clash, and `--strict-mcp-config` leaves them out."""

from __future__ import annotations

import json

from tests.mcp.conftest import needs_mcp
from tests.mcp.remote_servers import remote_app, served
from wisp.testing import reply

STREAM = ("--output-format", "stream-json", "--verbose")


def write_settings(wisp, name: str, servers: dict) -> None:
    folder = wisp.cwd / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps({"mcpServers": servers}))
    wisp.trust()  # a project's MCP servers start only in a folder the user trusts


@needs_mcp
def test_a_settings_http_server_runs_and_strict_config_leaves_it_out(wisp, server):
    server.script(reply.tool_use("mcp__web__add", {"a": 1, "b": 2}), reply.text("3 it is"),
                  reply.text("no servers"))
    with served(remote_app("http")) as remote:
        write_settings(wisp, "settings.json", {"web": {"type": "http",
                                                       "url": "http://127.0.0.1:9/gone"}})
        write_settings(wisp, "settings.local.json", {"web": {"type": "http",
                                                             "url": remote.url("/mcp")}})
        run = wisp("-p", "add", *STREAM, "--allowedTools", "mcp__web")
        strict = wisp("-p", "add", *STREAM, "--strict-mcp-config")
    assert run.returncode == 0, run.stderr
    init = run.of_type("system", "init")[0]
    assert init["mcp_servers"] == [{"name": "web", "status": "connected", "source": "http"}]
    result = server.requests[1].body["messages"][-1]["content"][0]
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert strict.of_type("system", "init")[0]["mcp_servers"] == []


def test_mcp_config_wins_over_settings_and_a_bad_settings_entry_fails_alone(wisp, server):
    server.script(reply.text("ok"))
    write_settings(wisp, "settings.json", {"web": {"type": "http", "url": "ftp://nope"},
                                           "broken": {"type": "http", "url": "ftp://nope"}})
    override = json.dumps({"mcpServers": {"web": {"type": "ws", "url": "ws://127.0.0.1:9"}}})
    run = wisp("-p", "hi", *STREAM, "--mcp-config", override)
    assert run.returncode == 0, run.stderr
    servers = {s["name"]: s for s in run.of_type("system", "init")[0]["mcp_servers"]}
    assert servers["web"] == {"name": "web", "status": "failed", "source": "ws"}  # the flag's
    assert servers["broken"] == {"name": "broken", "status": "failed", "source": "http"}
    assert run.result["result"] == "ok"
