"""The Task tool runs a subagent: its frames are tagged, its answer returns to the parent."""

from __future__ import annotations

import json

from wisp.testing import reply


def task_call(prompt, agent=None):
    args = {"description": "look around", "prompt": prompt}
    if agent:
        args["subagent_type"] = agent
    return reply.tool_use("Task", args)


def test_subagent_runs_and_reports_back(wisp, server):
    server.script(task_call("count the files"),          # parent asks for a subagent
                  reply.tool_use("Bash", {"command": "echo 3"}),  # subagent works
                  reply.text("there are 3 files"),        # subagent's final report
                  reply.text("the subagent says 3"))      # parent wraps up
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    task_id = run.of_type("assistant")[0]["message"]["content"][0]["id"]
    tagged = [f for f in run.frames if f.get("parent_tool_use_id") == task_id]
    # Its brief, its tool call and the result; its own text only with
    # --forward-subagent-text (tests/subagents/test_reference_tasks.py).
    assert [f["type"] for f in tagged] == ["user", "assistant", "user"]
    assert {f["agent_id"] for f in tagged} == {run.of_type("system", "task_started")[0][
        "task_id"]}
    sub_request = server.requests[1].body
    assert sub_request["messages"][0]["content"] == "count the files"
    assert "Task" not in {t["name"] for t in sub_request.get("tools", [])}
    parent_followup = server.requests[3].body["messages"][-1]["content"][0]
    # The report, framed as the reference frames it (tests/subagents/test_task_result.py).
    [framed] = parent_followup["content"]
    assert "\n  there are 3 files\nagentId: " in framed["text"]
    assert run.result["result"] == "the subagent says 3"


def test_custom_agent_from_the_agents_flag(wisp, server):
    agents = {"reviewer": {"description": "reviews code", "prompt": "You review code.",
                           "tools": ["Read"]}}
    server.script(task_call("review it", "reviewer"), reply.text("looks fine"),
                  reply.text("done"))
    run = wisp("-p", "x", "--agents", json.dumps(agents), "--output-format", "json")
    assert run.returncode == 0, run.stderr
    sub_request = server.requests[1].body
    assert sub_request["system"][0]["text"].startswith("You review code.")
    assert [t["name"] for t in sub_request["tools"]] == ["Read"]


def test_unknown_agent_type_is_a_tool_error(wisp, server):
    server.script(task_call("x", "nope"), reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    result = run.of_type("user")[0]["message"]["content"][0]
    assert result["is_error"] is True and "Unknown subagent_type" in result["content"]


def test_subagent_hooks_fire(wisp, server, tmp_path):
    log = tmp_path / "hooks.ndjson"
    hook = [{"hooks": [{"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}]
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SubagentStart": hook, "SubagentStop": hook,
                                              "Stop": hook}}))
    wisp.trust()
    server.script(task_call("go"), reply.text("sub done"), reply.text("all done"))
    wisp("-p", "x")
    names = [json.loads(line)["hook_event_name"] for line in log.read_text().splitlines()
             if line.strip()]
    assert names == ["SubagentStart", "SubagentStop", "Stop"]
