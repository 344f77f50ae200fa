"""Stdio MCP servers in the duplex session: started in the background, reported by
`mcp_status`, switched by `mcp_toggle`, restarted by `mcp_reconnect`, alive across an
interrupt, and gone when the session ends (EOF or SIGTERM)."""

from __future__ import annotations

import json
import signal
import sys

from tests.cli.test_interrupts import wait_for
from tests.mcp.conftest import (
    CALC,
    calc_entry,
    gone,
    mcp_config,
    needs_mcp,
    pid_alive,
    pids,
    raw_entry,
)
from wisp.testing import reply


def offered(request) -> list[str]:
    return [t["name"] for t in request.body["tools"]]


def statuses(proc) -> list[dict]:
    return proc.call("mcp_status", timeout=30)["response"]["mcpServers"]


@needs_mcp
def test_status_toggle_and_reconnect(duplex, server, pid_file):
    server.script(reply.text("a"), reply.text("b"))
    proc = duplex("--mcp-config", mcp_config(calc=calc_entry(pid_file)))
    proc.initialize()
    [calc] = statuses(proc)  # waits for the background start, not a snapshot of it
    assert calc["status"] == "connected" and "error" not in calc
    assert calc["tools"] == [{"name": "add", "annotations": {}},
                             {"name": "peek", "annotations": {"readOnly": True}}]
    assert (calc["transport"], calc["scope"], calc["source"]) == ("stdio", "dynamic", "dynamic")
    assert calc["serverInfo"]["name"] == "calc"
    assert calc["config"] == {"type": "stdio", "command": sys.executable, "args": [str(CALC)]}

    assert proc.call("mcp_toggle", serverName="calc", enabled=False)["subtype"] == "success"
    assert statuses(proc)[0]["status"] == "disabled"
    assert gone(pids(pid_file)[0])  # disabling disconnects, as in Claude Code
    proc.user("one")
    proc.wait_frame("result")
    assert proc.wait_frame("system", "init")["mcp_servers"][0]["status"] == "disabled"
    assert proc.call("mcp_toggle", serverName="calc", enabled=True, timeout=30)[
        "subtype"] == "success"
    assert statuses(proc)[0]["status"] == "connected"
    proc.user("two")
    proc.wait_frame("result", count=2)
    assert "mcp__calc__add" not in offered(server.requests[0])
    assert {"mcp__calc__add", "mcp__calc__peek"} <= set(offered(server.requests[1]))

    second = pids(pid_file)[1]
    assert proc.call("mcp_reconnect", serverName="calc", timeout=30)["subtype"] == "success"
    assert gone(second)  # the old process was closed, not leaked
    assert statuses(proc)[0]["status"] == "connected"
    assert proc.finish() == 0
    assert len(pids(pid_file)) == 3 and all(gone(pid) for pid in pids(pid_file))


def test_requests_from_the_server_and_a_changed_tool_list(duplex, server, pid_file, wisp):
    server.script(reply.tool_use("mcp__raw__probe", {}), reply.text("probed"),
                  reply.tool_use("mcp__raw__grow", {}), reply.text("grown"), reply.text("3"))
    proc = duplex("--mcp-config", mcp_config(raw=raw_entry(pid_file)),
                  "--allowedTools", "mcp__raw")
    proc.user("probe")
    assert proc.wait_frame("result")["result"] == "probed"
    answers = json.loads(server.requests[1].body["messages"][-1]["content"][0]["content"][0]
                         ["text"])
    assert answers[0] == {"jsonrpc": "2.0", "id": "s1", "result": {}}  # ping
    # roots/list: the session's working folder, as a file:// uri (as the reference lists it)
    assert answers[1]["id"] == "s2"
    assert {"uri": wisp.cwd.resolve().as_uri()} in answers[1]["result"]["roots"]

    proc.user("grow")
    assert proc.wait_frame("result", count=2)["result"] == "grown"
    # notifications/tools/list_changed makes wisp list the tools again, in the background.
    assert wait_for(lambda: "extra" in [t["name"] for t in statuses(proc)[0]["tools"]])
    proc.user("again")
    proc.wait_frame("result", count=3)
    assert "mcp__raw__extra" in offered(server.requests[4])
    assert proc.finish() == 0


def test_an_interrupt_leaves_the_server_running(duplex, server, pid_file, tmp_path):
    log = tmp_path / "raw.log"
    server.script(reply.tool_use("mcp__raw__wait", {}), reply.tool_use("mcp__raw__echo",
                  {"text": "still here"}), reply.text("done"))
    proc = duplex("--mcp-config", mcp_config(raw=raw_entry(pid_file)),
                  "--allowedTools", "mcp__raw", env={"RAW_LOG": str(log)})
    proc.user("wait")
    assert wait_for(lambda: log.exists() and "tools/call" in log.read_text())
    proc.call("interrupt")
    assert proc.wait_frame("result")["subtype"] == "error_during_execution"
    # The server was told to stop the call nobody waits for, and lives on.
    assert wait_for(lambda: "notifications/cancelled" in log.read_text())
    [pid] = pids(pid_file)
    assert pid_alive(pid)
    proc.user("echo")
    assert proc.wait_frame("result", count=2)["result"] == "done"
    echoed = server.requests[-1].body["messages"][-1]["content"][0]
    assert echoed["content"] == [{"type": "text", "text": "still here"}]
    assert proc.finish() == 0
    assert gone(pid)


def test_sigterm_ends_the_servers_too(duplex, pid_file):
    proc = duplex("--mcp-config", mcp_config(raw=raw_entry(pid_file)))
    assert statuses(proc)[0]["status"] == "connected"
    [pid] = pids(pid_file)
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.proc.wait(10) == 143
    assert gone(pid)


def test_servers_sent_in_initialize(duplex, server, pid_file):
    """TypeScript's `mcpServersDelivery: 'initialize'` puts them in the request."""
    proc = duplex()
    response = proc.initialize(mcpServers={"raw": raw_entry(pid_file)})["response"]
    assert response["mcp_servers_applied"] is True
    [raw] = statuses(proc)
    assert raw["name"] == "raw" and raw["status"] == "connected"
    assert raw["serverInfo"] == {"name": "raw", "version": "0.1"}
    assert proc.finish() == 0
    assert all(gone(pid) for pid in pids(pid_file))


def test_a_failed_server_says_why(duplex):
    config = mcp_config(gone={"command": "wisp-test-no-such-mcp-server"},
                        web={"type": "ws", "url": "ws://127.0.0.1:1/mcp"})
    proc = duplex("--mcp-config", config)
    gone_entry, web = statuses(proc)
    assert gone_entry["status"] == "failed"
    assert "could not start wisp-test-no-such-mcp-server" in gone_entry["error"]
    assert web["status"] == "failed" and "ws MCP servers are not supported" in web["error"]
    retried = proc.call("mcp_reconnect", serverName="gone")
    assert retried["subtype"] == "error" and "could not start" in retried["error"]
    assert proc.finish() == 0


def test_a_status_asked_just_before_eof_is_still_answered(duplex):
    """mcp_status waits for servers still starting; EOF must not swallow its answer."""
    config = mcp_config(nofile={"command": sys.executable, "args": ["/nonexistent/server.py"]})
    proc = duplex("--mcp-config", config)
    request_id = proc.request("mcp_status")
    proc.close_stdin()
    [entry] = proc.response_to(request_id)["response"]["mcpServers"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("MCP server nofile exited with code 2: ")
    assert "can't open file" in entry["error"]  # the tail of its stderr
    assert proc.finish() == 0
