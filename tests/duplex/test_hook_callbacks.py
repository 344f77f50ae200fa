"""`hook_callback` for matchers registered in initialize, and what each event's
answer does to the run."""

from __future__ import annotations

import uuid

from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}


def hooks(event, matcher=None, ids=("hook_0",), **extra):
    return {event: [{"matcher": matcher, "hookCallbackIds": list(ids), **extra}]}


def test_pre_tool_use_deny_stops_the_command(duplex, server, wisp):
    marker = wisp.cwd / "must-not-exist"
    server.script(reply.tool_use("Bash", {"command": f"touch {marker}"}), reply.text("ok"))
    proc = duplex("--permission-mode", "bypassPermissions", env=SANDBOX)
    proc.initialize(hooks=hooks("PreToolUse", "Bash"))
    proc.user("run it")
    ask = proc.wait_request("hook_callback")
    request = ask["request"]
    assert request["callback_id"] == "hook_0"
    hook_input = request["input"]
    assert hook_input["hook_event_name"] == "PreToolUse"
    assert hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": f"touch {marker}"}
    assert request["tool_use_id"] == hook_input["tool_use_id"]
    for key in ("session_id", "transcript_path", "cwd", "permission_mode"):
        assert key in hook_input
    proc.answer(
        ask,
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not this one",
            }
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert not marker.exists()
    tool_result = proc.of("user")[0]["message"]["content"][0]
    assert tool_result["is_error"] is True and "not this one" in str(tool_result["content"])


def test_pre_tool_use_allow_skips_the_permission_prompt(duplex, server, wisp):
    target = wisp.cwd / "allowed.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "x\n"}), reply.text("ok")
    )
    proc = duplex("--permission-prompt-tool", "stdio")
    proc.initialize(hooks=hooks("PreToolUse", "Write|Edit"))
    proc.user("write")
    proc.answer(
        proc.wait_request("hook_callback"),
        {
            "continue": True,
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"},
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert target.read_text() == "x\n"
    assert proc.of("control_request") == [proc.wait_request("hook_callback")]  # no can_use_tool


def test_pre_tool_use_updated_input_is_what_runs(duplex, server, wisp):
    asked, ran = wisp.cwd / "asked", wisp.cwd / "ran"
    server.script(reply.tool_use("Bash", {"command": f"touch {asked}"}), reply.text("ok"))
    proc = duplex("--permission-mode", "bypassPermissions", env=SANDBOX)
    proc.initialize(hooks=hooks("PreToolUse", "Bash"))
    proc.user("run it")
    proc.answer(
        proc.wait_request("hook_callback"),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": f"touch {ran}"},
            }
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert ran.exists() and not asked.exists()


def test_a_matcher_that_does_not_match_sends_nothing(duplex, server, wisp):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("ok"))
    proc = duplex()
    proc.initialize(hooks=hooks("PreToolUse", "Write"))
    proc.user("run it")
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert proc.of("control_request") == []


def test_post_tool_use_additional_context_reaches_the_model(duplex, server, wisp):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("ok"))
    proc = duplex()
    proc.initialize(hooks=hooks("PostToolUse", "Bash"))
    proc.user("run it")
    ask = proc.wait_request("hook_callback")
    assert ask["request"]["input"]["hook_event_name"] == "PostToolUse"
    assert "tool_response" in ask["request"]["input"]
    proc.answer(
        ask,
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "NOTE FROM POST HOOK",
            }
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert "NOTE FROM POST HOOK" in str(server.requests[1].body["messages"][-1])


def test_user_prompt_submit_context_and_a_fresh_tool_use_id(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex()
    proc.initialize(hooks=hooks("UserPromptSubmit"))
    proc.user("the prompt")
    ask = proc.wait_request("hook_callback")
    assert ask["request"]["input"]["prompt"] == "the prompt"
    uuid.UUID(ask["request"]["tool_use_id"])  # non-tool events get a fresh uuid
    proc.answer(
        ask,
        {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "EXTRA CONTEXT",
            }
        },
    )
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert "EXTRA CONTEXT" in str(server.requests[0].body["messages"])


def test_stop_block_continues_the_loop(duplex, server):
    server.script(reply.text("first stop"), reply.text("second stop"))
    proc = duplex()
    proc.initialize(hooks=hooks("Stop"))
    proc.user("go")
    first = proc.wait_request("hook_callback")
    assert first["request"]["input"]["stop_hook_active"] is False
    proc.answer(first, {"decision": "block", "reason": "KEEP GOING"})
    second = proc.wait_request("hook_callback", count=2)
    assert second["request"]["input"]["stop_hook_active"] is True
    proc.answer(second, {})
    result = proc.wait_frame("result")
    assert proc.finish() == 0
    assert result["result"] == "second stop" and result["num_turns"] == 2
    assert "KEEP GOING" in str(server.requests[1].body["messages"][-1])


def test_an_error_answer_skips_the_hook(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex()
    proc.initialize(hooks=hooks("UserPromptSubmit", ids=("hook_9",)))
    proc.user("go")
    proc.answer(proc.wait_request("hook_callback"), error="No hook callback found for ID: hook_9")
    assert proc.wait_frame("result")["result"] == "ok"
    assert proc.finish() == 0


def test_a_hook_that_times_out_is_withdrawn(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex()
    proc.initialize(hooks=hooks("UserPromptSubmit", timeout=0.3))
    proc.user("go")
    ask = proc.wait_request("hook_callback")
    cancel = proc.wait_frame("control_cancel_request")
    assert cancel["request_id"] == ask["request_id"]
    assert proc.wait_frame("result")["result"] == "ok"
    proc.answer(ask, {"decision": "block"})  # too late: ignored
    assert proc.finish() == 0
