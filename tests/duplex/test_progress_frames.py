"""Frames that show a UI where a turn stands: `tool_progress` heartbeats while a tool call
runs (every 30 s as the reference's; sooner here through WISP_TOOL_PROGRESS_INTERVAL_S),
and, when WISP_PROGRESS_FRAMES=1 asks, the reference's internal `turn_duration` and
`stop_hook_summary` (which it never writes to stdout: none without the variable)."""

from __future__ import annotations

import json

from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}
STOP_HOOK = json.dumps({"hooks": {"Stop": [{"hooks": [
    {"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": "
                                   "\"Stop\", \"additionalContext\": \"all clear\"}}'"}]}]}})


def test_a_long_tool_call_sends_heartbeats(duplex, server):
    server.script(reply.tool_use("Bash", {"command": "sleep 1.3"}, id="toolu_slow"),
                  reply.text("done"))
    proc = duplex("--permission-mode", "bypassPermissions",
                  env={**SANDBOX, "WISP_TOOL_PROGRESS_INTERVAL_S": "0.4"})
    proc.initialize()
    proc.user("wait a bit")
    proc.wait_frame("result")
    assert proc.finish() == 0
    beats = proc.of("tool_progress")
    assert len(beats) >= 2
    assert {(b["tool_use_id"], b["tool_name"], b["heartbeat"], b["parent_tool_use_id"])
            for b in beats} == {("toolu_slow", "Bash", True, None)}
    elapsed = [b["elapsed_time_seconds"] for b in beats]
    assert elapsed == sorted(elapsed) and elapsed[-1] >= 1
    kinds = [f["type"] for f in proc.frames]
    assert kinds.index("tool_progress") < kinds.index("user")  # while it ran, not after


def test_turn_and_stop_hook_summaries_when_asked(duplex, server):
    server.script(reply.text("first"), reply.text("second"))
    quiet = duplex("--settings", STOP_HOOK)
    quiet.initialize()
    quiet.user("hi")
    quiet.wait_frame("result")
    assert quiet.finish() == 0
    assert not quiet.of("system", "turn_duration") and not quiet.of("system",
                                                                   "stop_hook_summary")
    proc = duplex("--settings", STOP_HOOK, env={"WISP_PROGRESS_FRAMES": "1"})
    proc.initialize()
    proc.user("hi")
    proc.wait_frame("result")
    assert proc.finish() == 0
    [summary] = proc.of("system", "stop_hook_summary")
    assert summary["hook_count"] == 1 and summary["hook_infos"][0]["command"].startswith("echo")
    assert summary["hook_additional_context"] == ["all clear"]
    assert (summary["hook_errors"], summary["prevented_continuation"], summary["level"]) == (
        [], False, "info")
    [turn] = proc.of("system", "turn_duration")
    assert turn["duration_ms"] >= 0 and turn["message_count"] == 2
    kinds = [f["subtype"] if f["type"] == "system" else f["type"] for f in proc.frames]
    assert kinds.index("stop_hook_summary") < kinds.index("turn_duration") < kinds.index(
        "result")


def test_thinking_sends_its_estimated_tokens_as_it_streams(wisp, server):
    """`system/thinking_tokens` per thinking delta, as the reference sends them without
    any flag. The expected numbers are the reference's own for the same replies (measured
    against the scripted server, which cuts a block into three deltas): 21 characters →
    2, 4, 6; 1,020 characters → 85, 170, 255."""
    for thinking, expected in (("abcdefghijklmnopqrstu", [(2, 2), (4, 2), (6, 2)]),
                               ("Let me think about this carefully " * 30,
                                [(85, 85), (170, 85), (255, 85)])):
        server.script(reply.thinking(thinking, "answer"))
        run = wisp("-p", "think", "--output-format", "stream-json", "--verbose")
        seen = [(f["estimated_tokens"], f["estimated_tokens_delta"])
                for f in run.of_type("system", "thinking_tokens")]
        assert seen == expected
        kinds = [f.get("subtype") or f["type"] for f in run.frames]
        assert kinds.index("thinking_tokens") < kinds.index("assistant")  # while it thinks


def test_a_side_question_reports_its_start_before_its_answer(duplex, server):
    """`system/control_request_progress` names the request (as the reference's bridge
    sends it for a side question), before the control response; a progress frame a host
    sends wisp for a request it does not know is ignored, as the seed requires."""
    server.script(reply.text("Nothing is left."))
    proc = duplex()
    proc.initialize()
    proc.send({"type": "control_request_progress", "request_id": "unknown",
               "status": "started"})
    request_id = proc.request("side_question", question="what is left?")
    answer = proc.response_to(request_id)
    assert answer["response"] == {"response": "Nothing is left.", "synthetic": False}
    [progress] = proc.of("system", "control_request_progress")
    assert (progress["request_id"], progress["status"]) == (request_id, "started")
    assert proc.frames.index(progress) < next(
        i for i, f in enumerate(proc.frames) if f["type"] == "control_response"
        and f["response"]["request_id"] == request_id)
    assert proc.finish() == 0
