"""Requests wisp sends to its host: `can_use_tool`, `hook_callback` and their failures
(an error answer, a withdrawn request, stdin closed while one is pending)."""

from __future__ import annotations

import time

from wisp.testing import reply

STDIO = ("--permission-prompt-tool", "stdio")


def write_reply(path, content="from the model\n"):
    return reply.tool_use("Write", {"file_path": str(path), "content": content})


def test_can_use_tool_carries_the_sdk_fields_and_applies_updated_input(duplex, server, wisp):
    target = wisp.cwd / "perm.txt"
    server.script(write_reply(target), reply.text("done"))
    proc = duplex(*STDIO)
    proc.initialize()
    proc.user("write it")
    ask = proc.wait_request("can_use_tool")
    request = ask["request"]
    assert request["tool_name"] == "Write" and request["display_name"] == "Write"
    assert request["input"] == {"file_path": str(target), "content": "from the model\n"}
    assert request["tool_use_id"].startswith("toolu_")
    assert request["permission_suggestions"] == [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    ]
    assert request["blocked_path"] == str(target)
    assert isinstance(request["description"], str)
    assert request.get("decision_reason_type") in (None, "rule", "mode", "hook", "other")
    proc.answer(
        ask,
        {
            "behavior": "allow",
            "updatedInput": {"file_path": str(target), "content": "CHANGED BY HOST\n"},
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert target.read_text() == "CHANGED BY HOST\n"
    meta = proc.of("user")[0]["tool_result_meta"][0]
    assert meta["permission_decision"]["decision"] == "accept"


def test_allow_without_updated_input_keeps_the_original_ts_style(duplex, server, wisp):
    target = wisp.cwd / "ts.txt"
    server.script(write_reply(target), reply.text("done"))
    proc = duplex("--permission-prompt-tool=stdio")
    proc.user("write it")
    ask = proc.wait_request("can_use_tool")
    proc.answer(ask, {"behavior": "allow", "toolUseID": ask["request"]["tool_use_id"]})
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert target.read_text() == "from the model\n"


def test_deny_carries_the_message_to_the_model(duplex, server, wisp):
    target = wisp.cwd / "no.txt"
    server.script(write_reply(target), reply.text("ok, not writing"))
    proc = duplex(*STDIO)
    proc.user("write it")
    proc.answer(proc.wait_request("can_use_tool"), {"behavior": "deny", "message": "host says no"})
    result = proc.wait_frame("result")
    assert proc.finish() == 0
    assert not target.exists()
    tool_result = proc.of("user")[0]["message"]["content"][0]
    assert tool_result == {
        "tool_use_id": tool_result["tool_use_id"],
        "type": "tool_result",
        "content": "host says no",
        "is_error": True,
    }
    assert result["permission_denials"][0]["tool_name"] == "Write"
    assert result["is_error"] is False


def test_deny_with_interrupt_ends_the_turn(duplex, server, wisp):
    target = wisp.cwd / "no.txt"
    server.script(write_reply(target), reply.text("second prompt"))
    proc = duplex(*STDIO)
    proc.user("write it")
    proc.answer(
        proc.wait_request("can_use_tool"),
        {"behavior": "deny", "message": "stop everything", "interrupt": True},
    )
    result = proc.wait_frame("result")
    assert result["subtype"] == "error_during_execution"
    assert len(server.requests) == 1  # no model call after the interrupting deny
    proc.user("again")
    assert proc.wait_frame("result", count=2)["result"] == "second prompt"
    assert proc.finish() == 0


def test_an_error_answer_denies_the_tool_and_the_run_goes_on(duplex, server, wisp):
    target = wisp.cwd / "err.txt"
    server.script(write_reply(target), reply.text("carried on"))
    proc = duplex(*STDIO)
    proc.user("write it")
    proc.answer(proc.wait_request("can_use_tool"), error="canUseTool callback is not provided")
    assert proc.wait_frame("result")["result"] == "carried on"
    assert proc.finish() == 0
    assert not target.exists()
    assert "canUseTool callback is not provided" in str(proc.of("user")[0]["message"])


def test_updated_permissions_apply_to_the_rest_of_the_session(duplex, server, wisp):
    first, second = wisp.cwd / "a.txt", wisp.cwd / "b.txt"
    server.script(write_reply(first), reply.text("one"), write_reply(second), reply.text("two"))
    proc = duplex(*STDIO)
    proc.user("first")
    ask = proc.wait_request("can_use_tool")
    proc.answer(
        ask,
        {
            "behavior": "allow",
            "updatedInput": ask["request"]["input"],
            "updatedPermissions": [
                {
                    "type": "addRules",
                    "behavior": "allow",
                    "rules": [{"toolName": "Write"}],
                    "destination": "session",
                }
            ],
        },
    )
    proc.wait_frame("result")
    proc.user("second")
    proc.wait_frame("result", count=2)
    assert proc.finish() == 0
    assert first.exists() and second.exists()
    assert len(proc.of("control_request")) == 1  # the second Write was not asked about


def test_eof_while_can_use_tool_is_pending_denies_and_finishes(duplex, server, wisp):
    target = wisp.cwd / "pending.txt"
    server.script(write_reply(target), reply.text("finished without the host"))
    proc = duplex(*STDIO)
    proc.user("write it")
    proc.wait_request("can_use_tool")
    started = time.monotonic()
    assert proc.finish(timeout=10) == 0
    assert time.monotonic() - started < 5
    assert not target.exists()
    assert proc.results()[0]["result"] == "finished without the host"


def test_a_response_for_an_unknown_request_is_ignored(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex()
    proc.send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": "nobody", "response": {}},
        }
    )
    proc.user("hi")
    proc.wait_frame("result")
    assert proc.finish() == 0


def test_the_host_can_cancel_a_request_it_sent(duplex):
    """control_cancel_request (SDK → wisp): no response is owed. initialize with an
    SDK MCP server and no manifest waits on the handshake, so it is still running."""
    proc = duplex()
    proc.call("mcp_status")  # so initialize is not the first line, which is answered early
    request_id = proc.request("initialize", hooks=None, sdkMcpServers=["calc"])
    handshake = proc.wait_request("mcp_message")
    proc.send({"type": "control_cancel_request", "request_id": request_id})
    # wisp withdraws its own pending MCP request in turn (wisp → SDK).
    cancel = proc.wait_frame("control_cancel_request")
    assert cancel["request_id"] == handshake["request_id"]
    assert proc.call("mcp_status")["subtype"] == "success"
    assert proc.finish() == 0
    answered = [f for f in proc.of("control_response") if f["response"]["request_id"] == request_id]
    assert answered == []


def test_interrupt_withdraws_a_pending_can_use_tool(duplex, server, wisp):
    """A host that never answers (a TS callback returning null) can't hang the turn."""
    server.script(write_reply(wisp.cwd / "never.txt"), reply.text("next"))
    proc = duplex(*STDIO)
    proc.user("write it")
    ask = proc.wait_request("can_use_tool")
    proc.call("interrupt")
    cancel = proc.wait_frame("control_cancel_request")
    assert cancel["request_id"] == ask["request_id"]
    assert proc.wait_frame("result")["terminal_reason"] == "aborted_tools"
    proc.user("again")
    assert proc.wait_frame("result", count=2)["result"] == "next"
    assert proc.finish() == 0
