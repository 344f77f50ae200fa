"""A host that attaches again to a running session (docs/protocol.md, "Re-attaching"):
a second initialize applies nothing twice, its answer re-delivers the permission requests
still waiting, and `update_environment_variables` changes the session's environment live."""

from __future__ import annotations

from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}
HOOKS = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]}


def test_a_second_initialize_does_not_register_hooks_twice(duplex, server):
    server.script(reply.tool_use("Bash", {"command": "true"}), reply.text("done"))
    proc = duplex("--permission-mode", "bypassPermissions", env=SANDBOX)
    first = proc.initialize(hooks=HOOKS, title="first")["response"]
    again = proc.initialize(hooks=HOOKS, title="second")["response"]
    assert first["hooks_applied"] is True and again["hooks_applied"] is False
    assert "pending_permission_requests" not in proc.initialize()
    proc.user("run it")
    proc.answer(proc.wait_request("hook_callback"), {})
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert len(proc.of("control_request")) == 1  # one callback, not one per initialize


def test_pending_permission_requests_are_delivered_again(duplex, server, wisp):
    target = wisp.cwd / "made.txt"
    server.script(reply.tool_use("Bash", {"command": f"touch {target}"}), reply.text("done"))
    proc = duplex("--permission-prompt-tool", "stdio")
    proc.initialize()
    proc.user("make it")
    asked = proc.wait_request("can_use_tool")
    # The host went away before answering; a new one attaches.
    envelope = proc.initialize()
    [pending] = envelope["pending_permission_requests"]
    assert pending == {"type": "control_request", "request_id": asked["request_id"],
                       "request": asked["request"]}
    proc.answer(pending, {"behavior": "allow", "updatedInput": asked["request"]["input"]})
    assert proc.wait_frame("result")["result"] == "done"
    assert proc.finish() == 0
    assert target.exists()


def test_environment_updates_apply_to_the_next_tool_and_request(duplex, server):
    server.script(reply.text("one"), reply.tool_use("Bash", {"command": "echo $GREETING"}),
                  reply.text("two"))
    proc = duplex("--permission-mode", "bypassPermissions", env=SANDBOX)
    proc.initialize()
    proc.user("first")
    proc.wait_frame("result")
    proc.send({"type": "update_environment_variables",
               "variables": {"GREETING": "hello-live", "ANTHROPIC_API_KEY": "sk-rotated",
                             "IS_SANDBOX": "0"}})
    proc.user("second")
    proc.wait_frame("result", count=2)
    assert proc.finish() == 0
    keys = [r.headers["x-api-key"] for r in server.requests]
    assert keys == ["sk-test", "sk-rotated", "sk-rotated"]
    tool_result = proc.of("user")[0]["message"]["content"][0]
    assert "hello-live" in str(tool_result["content"])
    assert "refused IS_SANDBOX" in proc.stderr
