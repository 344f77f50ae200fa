"""Plan mode through the host protocol, against a real wisp process: in plan mode the
model may write only the session's plan file; ExitPlanMode reaches the host as a
`can_use_tool` that only a person can answer (`requires_user_interaction`, no rule to
suggest); approved, the mode goes back to default (a `status` frame says so) and
`get_plan` answers the plan and its file; refused, the session stays in plan mode."""

from __future__ import annotations

import json

from wisp.testing import reply

PLAN = "# Plan\n\n1. Write hello.txt\n2. Check it"


def planning_session(duplex, server, *replies):
    server.script(*replies, reply.text("done"))
    proc = duplex("--permission-prompt-tool", "stdio", "--permission-mode", "plan")
    proc.user("plan it")
    return proc


def plan_path(wisp, proc) -> str:
    session_id = proc.wait_frame("system", "init")["session_id"]
    return str(wisp.home / ".wisp" / "plans" / f"{session_id}.md")


def test_an_approved_plan_ends_plan_mode_and_get_plan_answers_it(duplex, server, wisp):
    proc = planning_session(duplex, server, reply.tool_use("ExitPlanMode", {"plan": PLAN}))
    ask = proc.wait_request("can_use_tool")["request"]
    assert ask["tool_name"] == "ExitPlanMode" and ask["input"] == {"plan": PLAN}
    assert ask["requires_user_interaction"] is True
    assert ask["permission_suggestions"] == []  # "always allow" makes no sense here
    proc.answer(proc.wait_request("can_use_tool"),
                {"behavior": "allow", "updatedInput": ask["input"]})
    result = proc.wait_frame("result")
    assert result["subtype"] == "success"
    statuses = [f.get("permissionMode") for f in proc.of("system", "status")]
    assert "default" in statuses
    path = plan_path(wisp, proc)
    assert proc.call("get_plan")["response"] == {"exists": True, "content": PLAN,
                                                 "path": path}
    tool_result = next(f for f in proc.of("user") if f.get("tool_use_result"))
    assert tool_result["tool_use_result"] == {"plan": PLAN, "isAgent": False,
                                              "filePath": path}
    assert proc.finish() == 0


def test_a_refused_plan_stays_in_plan_mode(duplex, server):
    proc = planning_session(duplex, server, reply.tool_use("ExitPlanMode", {"plan": PLAN}))
    proc.answer(proc.wait_request("can_use_tool"),
                {"behavior": "deny", "message": "add a step for the docs"})
    proc.wait_frame("result")
    assert [f.get("permissionMode") for f in proc.of("system", "status")
            if f.get("permissionMode")] == []
    assert proc.call("get_plan")["response"] == {"exists": False}
    second = server.requests[1].body
    assert "add a step for the docs" in json.dumps(second["messages"][-1])
    assert "Plan mode is on" in json.dumps(second["system"])  # still planning
    assert proc.finish() == 0


def test_in_plan_mode_only_the_plan_file_may_be_written(duplex, server, wisp):
    elsewhere = wisp.cwd / "hello.txt"

    def write(body):
        text = json.dumps(body["system"])
        path = text.split("You may draft it in ", 1)[1].split(",", 1)[0]
        return reply.tool_use("Write", {"file_path": path, "content": PLAN})

    proc = planning_session(duplex, server, reply.dynamic(write),
                            reply.tool_use("Write", {"file_path": str(elsewhere),
                                                     "content": "x"}))
    proc.wait_frame("result")
    assert proc.of("control_request") == []  # neither write was asked about
    assert not elsewhere.exists()
    path = plan_path(wisp, proc)
    assert proc.call("get_plan")["response"] == {"exists": True, "content": PLAN,
                                                 "path": path}
    assert proc.finish() == 0


def test_outside_plan_mode_exit_plan_mode_is_refused_without_asking(duplex, server):
    server.script(reply.tool_use("ExitPlanMode", {"plan": PLAN}), reply.text("ok"))
    proc = duplex("--permission-prompt-tool", "stdio")
    proc.user("go")
    proc.wait_frame("result")
    first, second = (r.body for r in server.requests[:2])
    assert "Plan mode is on" not in json.dumps(first["system"])
    refused = second["messages"][-1]["content"][0]
    assert refused["is_error"] is True and "only for plan mode" in json.dumps(refused)
    assert proc.of("control_request") == []
    assert proc.finish() == 0
