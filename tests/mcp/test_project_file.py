"""A project's `.mcp.json`: its servers start only once the user trusts the folder; the
settings' `disabledMcpjsonServers` / `enabledMcpjsonServers` narrow it; settings'
`mcpServers` win a name clash; `--strict-mcp-config` leaves it out."""

from __future__ import annotations

import json

from tests.mcp.conftest import calc_entry, needs_mcp
from wisp.testing import reply

STREAM = ("--output-format", "stream-json", "--verbose")


def _servers(run) -> dict[str, str]:
    return {s["name"]: s["status"] for s in run.of_type("system", "init")[0]["mcp_servers"]}


@needs_mcp
def test_mcp_json_servers_start_in_a_trusted_folder_only(wisp, server, tmp_path):
    server.script(reply.text("untrusted"), reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}),
                  reply.text("5 it is"), reply.text("strict"))
    (wisp.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "calc": calc_entry(tmp_path / "calc.pid"),
        "off": calc_entry(tmp_path / "off.pid")}}))
    (wisp.cwd / ".claude").mkdir()
    (wisp.cwd / ".claude" / "settings.local.json").write_text(json.dumps(
        {"disabledMcpjsonServers": ["off"]}))
    before = wisp("-p", "hi", *STREAM)
    assert before.returncode == 0, before.stderr
    assert _servers(before) == {}
    wisp.trust()
    run = wisp("-p", "add", *STREAM, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert _servers(run) == {"calc": "connected"}
    assert run.result["result"] == "5 it is"
    strict = wisp("-p", "hi", *STREAM, "--strict-mcp-config")
    assert _servers(strict) == {}


def test_settings_servers_win_a_name_clash(wisp, server, tmp_path):
    server.script(reply.text("ok"))
    (wisp.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "web": {"type": "http", "url": "http://127.0.0.1:9/from-mcp-json"}}}))
    (wisp.cwd / ".claude").mkdir()
    (wisp.cwd / ".claude" / "settings.json").write_text(json.dumps({"mcpServers": {
        "web": {"type": "ws", "url": "ws://127.0.0.1:9"}}}))
    wisp.trust()
    run = wisp("-p", "hi", *STREAM)
    assert run.returncode == 0, run.stderr
    [entry] = run.of_type("system", "init")[0]["mcp_servers"]
    assert (entry["name"], entry["source"]) == ("web", "ws")
