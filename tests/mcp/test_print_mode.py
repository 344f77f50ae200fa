"""`wisp -p --mcp-config`: stdio servers connect before `system/init`, their tools reach
the model under the usual permission rules, and no server outlives wisp."""

from __future__ import annotations

import json
import signal

from tests.cli.test_interrupts import wait_for
from tests.mcp.conftest import (
    calc_entry,
    gone,
    mcp_config,
    needs_mcp,
    pids,
    raw_entry,
)
from wisp.testing import reply

STREAM = ("--output-format", "stream-json", "--verbose")


def tool_results(request) -> list[dict]:
    return [b for b in request.body["messages"][-1]["content"] if b["type"] == "tool_result"]


@needs_mcp
def test_an_allowed_tool_returns_its_result_to_the_model(wisp, server, pid_file):
    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 40}), reply.text("42"))
    run = wisp("-p", "add", *STREAM, "--mcp-config", mcp_config(calc=calc_entry(pid_file)),
               "--allowedTools", "mcp__calc__add")
    assert run.returncode == 0, run.stderr
    init = run.of_type("system", "init")[0]
    assert run.frames[0] is init  # still the first frame, only later
    assert {"mcp__calc__add", "mcp__calc__peek"} <= set(init["tools"])
    assert init["mcp_servers"] == [{"name": "calc", "status": "connected", "source": "stdio"}]
    offered = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert offered["mcp__calc__add"]["description"] == "Add two numbers."
    assert offered["mcp__calc__add"]["input_schema"]["required"] == ["a", "b"]
    [result] = tool_results(server.requests[1])
    assert result["is_error"] is False
    assert result["content"] == [{"type": "text", "text": "42"}]
    assert run.result["result"] == "42"
    [pid] = pids(pid_file)
    assert gone(pid)


@needs_mcp
def test_default_mode_denies_a_tool_not_allowed_but_runs_a_read_only_one(wisp, server,
                                                                          pid_file):
    server.script(reply.tool_use("mcp__calc__add", {"a": 1, "b": 1}),
                  reply.tool_use("mcp__calc__peek", {}), reply.text("ok"))
    run = wisp("-p", "go", *STREAM, "--mcp-config", mcp_config(calc=calc_entry(pid_file)))
    assert run.returncode == 0, run.stderr
    [denied] = tool_results(server.requests[1])
    assert denied["is_error"] is True and "mcp__calc__add" in denied["content"]
    assert [d["tool_name"] for d in run.result["permission_denials"]] == ["mcp__calc__add"]
    [peeked] = tool_results(server.requests[2])
    assert peeked["is_error"] is False
    assert peeked["content"] == [{"type": "text", "text": "all quiet"}]


def test_a_server_that_cannot_start_is_failed_and_the_run_goes_on(wisp, server):
    server.script(reply.text("fine without it"))
    config = mcp_config(gone={"command": "wisp-test-no-such-mcp-server"})
    run = wisp("-p", "hi", *STREAM, "--mcp-config", config)
    assert run.returncode == 0, run.stderr
    init = run.of_type("system", "init")[0]
    assert init["mcp_servers"] == [{"name": "gone", "status": "failed", "source": "stdio"}]
    assert not any(name.startswith("mcp__") for name in init["tools"])
    assert run.result["result"] == "fine without it"


def test_a_server_that_dies_mid_call_gives_an_error_result(wisp, server, pid_file):
    server.script(reply.tool_use("mcp__raw__crash", {}), reply.tool_use("mcp__raw__echo", {}),
                  reply.text("noted"))
    run = wisp("-p", "go", *STREAM, "--mcp-config", mcp_config(raw=raw_entry(pid_file)),
               "--allowedTools", "mcp__raw")
    assert run.returncode == 0, run.stderr
    [crashed] = tool_results(server.requests[1])
    assert crashed["is_error"] is True
    assert "exited with code 3" in crashed["content"]
    assert "something broke" in crashed["content"]  # the tail of its stderr says why
    [after] = tool_results(server.requests[2])
    assert after["is_error"] is True and "exited with code 3" in after["content"]
    assert run.result["subtype"] == "success"


def test_a_bare_disallowed_rule_removes_a_servers_tools(wisp, server, pid_file):
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM, "--mcp-config", mcp_config(raw=raw_entry(pid_file)),
               "--disallowedTools", "mcp__raw__probe")
    tools = run.of_type("system", "init")[0]["tools"]
    assert "mcp__raw__echo" in tools and "mcp__raw__probe" not in tools
    assert "mcp__raw__probe" not in [t["name"] for t in server.requests[0].body["tools"]]
    run = wisp("-p", "hi", *STREAM, "--mcp-config", mcp_config(raw=raw_entry(pid_file)),
               "--disallowedTools", "mcp__raw")
    assert not any(n.startswith("mcp__") for n in run.of_type("system", "init")[0]["tools"])


def test_a_silent_server_times_out_at_start_up(wisp, server, pid_file):
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM, "--mcp-config", mcp_config(mute=raw_entry(pid_file, "mute")),
               env={"MCP_TIMEOUT": "300"})
    assert run.returncode == 0, run.stderr
    assert run.of_type("system", "init")[0]["mcp_servers"][0]["status"] == "failed"
    [pid] = pids(pid_file)
    assert gone(pid)


def test_text_output_and_a_config_file(wisp, server, pid_file, tmp_path):
    server.script(reply.tool_use("mcp__raw__echo", {"text": "hello"}), reply.text("said it"))
    path = tmp_path / "mcp.json"
    path.write_text(mcp_config(raw=raw_entry(pid_file)))
    run = wisp("-p", "hi", "--mcp-config", str(path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "said it\n"
    [echoed] = tool_results(server.requests[1])
    assert echoed["content"] == [{"type": "text", "text": "hello"}]


def test_sigterm_mid_call_ends_the_run_and_the_server(wisp, server, pid_file, tmp_path):
    log = tmp_path / "raw.log"
    server.script(reply.tool_use("mcp__raw__wait", {}), reply.text("never"))
    proc = wisp.spawn("-p", "wait", *STREAM, "--mcp-config", mcp_config(raw=raw_entry(pid_file)),
                 "--allowedTools", "mcp__raw", env={"RAW_LOG": str(log)})
    assert wait_for(lambda: log.exists() and "tools/call" in log.read_text())
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    result = json.loads(out.splitlines()[-1])
    assert result["type"] == "result" and result["subtype"] == "error_during_execution"
    assert "Traceback" not in err
    [pid] = pids(pid_file)
    assert gone(pid)
