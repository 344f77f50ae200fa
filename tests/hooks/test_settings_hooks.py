"""Shell-command hooks from settings: when they fire, what they get, what they can do."""

from __future__ import annotations

import json

from wisp.testing import reply


def settings_with(wisp, hooks):
    path = wisp.cwd / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    wisp.trust()  # a project's hooks run only in a folder the user trusts


def recorder(log, matcher=None):
    entry = {"hooks": [{"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}
    if matcher:
        entry["matcher"] = matcher
    return [entry]


def read_log(log):
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_every_event_fires_at_its_point_with_its_input(wisp, server, tmp_path):
    log = tmp_path / "events.ndjson"
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
              "PostToolUseFailure", "Stop", "SessionEnd", "PermissionRequest", "Notification"]
    settings_with(wisp, {event: recorder(log) for event in events})
    server.script(
        reply.tool_use("Bash", {"command": "echo hi"}),
        reply.tool_use("Bash", {"command": "touch made_by_model"}),
        reply.tool_use("Write", {"file_path": str(wisp.cwd / "w.txt"), "content": "x"}),
        reply.text("done"))
    run = wisp("-p", "do things")
    assert run.returncode == 0
    seen = read_log(log)
    names = [e["hook_event_name"] for e in seen]
    assert names == ["SessionStart", "UserPromptSubmit",
                     "PreToolUse", "PostToolUse",          # echo hi (read-only, allowed)
                     "PreToolUse", "PermissionRequest", "Notification",  # touch: needs a grant
                     "PreToolUse", "PermissionRequest", "Notification",  # Write: denied in -p
                     "Stop", "SessionEnd"]
    by_name = {}
    for event in seen:
        by_name.setdefault(event["hook_event_name"], event)
        for key in ("session_id", "transcript_path", "cwd", "permission_mode"):
            assert key in event
    assert by_name["SessionStart"]["source"] == "startup"
    assert by_name["UserPromptSubmit"]["prompt"] == "do things"
    assert by_name["PreToolUse"]["tool_name"] == "Bash"
    assert by_name["PreToolUse"]["tool_input"] == {"command": "echo hi"}
    assert by_name["PostToolUse"]["tool_response"]["stdout"].strip() == "hi"
    assert by_name["Stop"]["stop_hook_active"] is False


def test_post_tool_use_failure_fires_for_a_failing_tool(wisp, server, tmp_path):
    log = tmp_path / "fail.ndjson"
    settings_with(wisp, {"PostToolUseFailure": recorder(log)})
    server.script(reply.tool_use("Read", {"file_path": str(wisp.cwd / "missing.txt")}),
                  reply.text("done"))
    wisp("-p", "x")
    (event,) = read_log(log)
    assert event["tool_name"] == "Read"


def test_pre_tool_use_exit_2_blocks_and_the_model_sees_why(wisp, server):
    marker = wisp.cwd / "ran.txt"
    settings_with(wisp, {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}]}]})
    server.script(reply.tool_use("Bash", {"command": f"touch {marker}"}), reply.text("ok"))
    run = wisp("-p", "x", "--permission-mode", "bypassPermissions",
               "--output-format", "stream-json", "--verbose", env={"IS_SANDBOX": "1"})
    assert not marker.exists()
    tool_result = run.of_type("user")[0]["message"]["content"][0]
    assert tool_result["is_error"] is True
    assert "no shell today" in tool_result["content"]
    sent = server.requests[1].body["messages"][-1]["content"][0]
    assert "no shell today" in sent["content"]


def test_matcher_is_a_regex_on_the_tool_name(wisp, server, tmp_path):
    log = tmp_path / "m.ndjson"
    settings_with(wisp, {"PreToolUse": recorder(log, matcher="Write|Edit")})
    server.script(reply.tool_use("Bash", {"command": "echo a"}), reply.text("done"))
    wisp("-p", "x")
    assert not log.exists()


def test_stop_hook_that_blocks_continues_the_loop_once(wisp, server, tmp_path):
    script = tmp_path / "stop.sh"
    script.write_text(
        "#!/bin/sh\n"
        "if grep -q '\"stop_hook_active\": *true' ; then exit 0; fi\n"
        "echo '{\"decision\": \"block\", \"reason\": \"also write the tests\"}'\n")
    script.chmod(0o755)
    settings_with(wisp, {"Stop": [{"hooks": [{"type": "command", "command": str(script)}]}]})
    server.script(reply.text("first answer"), reply.text("second answer"))
    run = wisp("-p", "x", "--output-format", "json")
    assert json.loads(run.stdout)["result"] == "second answer"
    assert len(server.requests) == 2
    last = server.requests[1].body["messages"][-1]
    assert "also write the tests" in json.dumps(last)


def test_hook_timeout_is_reported_and_the_run_continues(wisp, server):
    settings_with(wisp, {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.5}]}]})
    server.script(reply.tool_use("Bash", {"command": "echo still-ran"}), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose",
               "--include-hook-events")
    assert run.returncode == 0
    responses = run.of_type("system", "hook_response")
    assert any(r.get("outcome") == "timeout" for r in responses)
    assert run.of_type("system", "hook_started")
    tool_result = run.of_type("user")[0]["message"]["content"][0]
    assert "still-ran" in tool_result["content"]


def test_user_prompt_submit_adds_context(wisp, server):
    settings_with(wisp, {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'today is a holiday'"}]}]})
    server.script(reply.text("ok"))
    wisp("-p", "x")
    assert "today is a holiday" in json.dumps(server.requests[0].body["messages"])


def test_json_output_permission_decision_allows_a_write(wisp, server):
    decision = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "allow"}}
    settings_with(wisp, {"PreToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": f"echo '{json.dumps(decision)}'"}]}]})
    target = wisp.cwd / "hooked.txt"
    server.script(reply.tool_use("Write", {"file_path": str(target), "content": "x"}),
                  reply.text("done"))
    wisp("-p", "x")
    assert target.exists()


def test_hook_events_report_progress_and_response(wisp, server):
    settings_with(wisp, {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo step one; echo step two"}]}]})
    server.script(reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose", "--include-hook-events")
    started = run.of_type("system", "hook_started")
    progress = run.of_type("system", "hook_progress")
    response = run.of_type("system", "hook_response")
    assert len(started) == len(response) == 1
    assert [p["stdout"] for p in progress] == ["step one", "step two"]
    assert response[0]["exit_code"] == 0 and response[0]["hook_event"] == "UserPromptSubmit"
    assert started[0]["hook_id"] == response[0]["hook_id"] == progress[0]["hook_id"]


def test_hook_events_are_off_by_default(wisp, server):
    settings_with(wisp, {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo hi"}]}]})
    server.script(reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert not run.of_type("system", "hook_started")


def test_user_prompt_submit_exit_2_blocks_the_prompt_and_the_run_succeeds(wisp, server):
    settings_with(wisp, {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'not now' >&2; exit 2"}]}]})
    server.script(reply.text("never sent"))
    run = wisp("-p", "hello", "--output-format", "json")
    assert run.returncode == 0
    result = json.loads(run.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("success", False, 0)
    assert result["result"] == ("UserPromptSubmit operation blocked by hook:\n"
                                "[echo 'not now' >&2; exit 2]: not now\n\n\nOriginal prompt: hello")
    assert "terminal_reason" not in result
    assert server.requests == []


def test_a_pre_tool_use_denial_reads_as_a_hook_error(wisp, server):
    settings_with(wisp, {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}]}]})
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    tool_result = run.of_type("user")[0]["message"]["content"][0]
    assert tool_result["content"] == ("PreToolUse:Bash hook error: "
                                      "[echo 'no shell today' >&2; exit 2]: no shell today\n")
    assert not run.of_type("system", "permission_denied")
    assert run.result["permission_denials"][0]["tool_name"] == "Bash"


def test_a_system_message_is_shown_and_continue_false_ends_the_run(wisp, server):
    answer = json.dumps({"systemMessage": "heads up", "continue": False})
    settings_with(wisp, {"PostToolUse": [{"hooks": [
        {"type": "command", "command": f"echo '{answer}'"}]}]})
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("never sent"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    [notice] = run.of_type("system", "informational")
    assert (notice["content"], notice["level"]) == ("PostToolUse:Bash says: heads up", "notice")
    assert (run.result["terminal_reason"], run.result["is_error"]) == ("hook_stopped", False)
    assert len(server.requests) == 1
