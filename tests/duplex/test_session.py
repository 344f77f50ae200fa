"""The duplex session over real pipes: prompts, queueing, bad input, EOF and exit codes."""

from __future__ import annotations

import contextlib
import subprocess
import time

import pytest

from tests.conftest import wisp_command
from tests.duplex.harness import texts_of
from wisp.testing import reply


def test_initialize_then_two_prompts_each_get_init_assistant_result(duplex, server):
    server.script(reply.text("first answer"), reply.text("second answer"))
    wisp = duplex()
    answer = wisp.initialize()["response"]
    assert answer["pid"] == wisp.proc.pid
    assert answer["claude_code_version"].count(".") == 2
    assert answer["current_permission_mode"] == "default"
    wisp.user("one")
    wisp.wait_frame("result")
    wisp.user([{"type": "text", "text": "two"}])  # block-list content, as TS sends it
    second = wisp.wait_frame("result", count=2)
    assert wisp.finish() == 0
    assert [texts_of(a) for a in wisp.of("assistant")] == [["first answer"], ["second answer"]]
    assert len(wisp.of("system", "init")) == 2
    assert second["result"] == "second answer" and second["result_index"] == 1
    # The second request carries the whole conversation.
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


def test_main_thread_frames_carry_an_explicit_null_parent(duplex, server):
    server.script(reply.text("hi"))
    wisp = duplex()
    wisp.user("x")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    for frame in wisp.of("assistant") + wisp.of("user"):
        assert "parent_tool_use_id" in frame and frame["parent_tool_use_id"] is None


def test_a_malformed_line_gets_an_error_frame_and_the_session_goes_on(duplex, server):
    server.script(reply.text("before"), reply.text("after"))
    wisp = duplex()
    wisp.user("one")
    wisp.wait_frame("result")
    wisp.send("this is {not json")
    error = wisp.wait_frame("system", "input_error")
    assert "line 2" in error["error"] and "invalid JSON" in error["error"]
    wisp.send("[1, 2]")  # valid JSON, but not a frame object
    assert "expected a JSON object" in wisp.wait_frame("system", "input_error", count=2)["error"]
    wisp.user("two")
    assert wisp.wait_frame("result", count=2)["result"] == "after"
    assert wisp.finish() == 0
    assert all(line.startswith("{") for line in wisp.raw_lines)  # stdout stays pure NDJSON


def test_a_user_frame_without_content_is_reported_not_run(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    wisp.send({"type": "user", "message": {"role": "user"}})
    assert "message.content" in wisp.wait_frame("system", "input_error")["error"]
    wisp.user("fine")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert len(server.requests) == 1


def test_unknown_frame_types_are_ignored(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    wisp.send({"type": "bogus_frame_type", "x": 1})
    wisp.send({"type": "keep_alive"})
    wisp.user("hi")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert wisp.of("system", "input_error") == []


def test_queued_prompts_run_in_order_each_with_one_result(duplex, server):
    server.script(reply.text("a", delay=0.05), reply.text("b"), reply.text("c"))
    wisp = duplex()
    for word in ("one", "two", "three"):
        wisp.user(word)
    assert wisp.finish() == 0  # EOF does not abort queued work
    results = wisp.results()
    assert [r["result"] for r in results] == ["a", "b", "c"]
    assert [r["result_index"] for r in results] == [0, 1, 2]
    asked = [m["content"] for m in (r.body["messages"][-1] for r in server.requests)]
    assert asked == ["one", "two", "three"]


def test_eof_exits_1_when_the_last_result_is_an_error(duplex, server):
    server.script(reply.text("fine"), reply.error(400, "bad request"))
    wisp = duplex()
    wisp.user("one")
    wisp.user("two")
    assert wisp.finish() == 1
    assert [r["is_error"] for r in wisp.results()] == [False, True]


def test_eof_exits_0_when_an_error_is_followed_by_a_success(duplex, server):
    server.script(reply.error(400, "bad request"), reply.text("fine"))
    wisp = duplex()
    wisp.user("one")
    wisp.user("two")
    assert wisp.finish() == 0


def test_empty_stdin_exits_0_without_output(wisp):
    proc = subprocess.run(
        [
            *wisp_command(),
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
        ],
        cwd=wisp.cwd,
        env=wisp.env,
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout == ""


def test_initialize_then_eof_exits_0_after_answering(duplex):
    wisp = duplex()
    wisp.initialize()
    assert wisp.finish() == 0
    assert [f["type"] for f in wisp.frames] == ["control_response"]


def test_the_first_prompt_may_arrive_before_the_initialize_answer(duplex, server):
    """TS writes the prompt right after initialize without waiting (docs/protocol.md, "The
    initialize handshake")."""
    server.script(reply.text("ok"))
    wisp = duplex()
    request_id = wisp.request("initialize", hooks=None, systemPrompt=["Be terse."])
    wisp.user("hi")
    assert wisp.finish() == 0
    assert wisp.response_to(request_id)["subtype"] == "success"
    assert wisp.results()[0]["result"] == "ok"
    # initialize's config applied to the prompt that raced it.
    assert "Be terse." in str(server.requests[0].body["system"])


def test_a_second_initialize_succeeds_again(duplex):
    wisp = duplex()
    wisp.initialize()
    wisp.initialize()
    assert wisp.finish() == 0


@pytest.mark.parametrize("style", ["equals", "two-tokens"])
def test_argv_in_both_sdk_styles(duplex, server, style):
    server.script(reply.text("ok"))
    flags = {"--model": "claude-sonnet-4-5", "--max-turns": "3", "--permission-mode": "plan"}
    if style == "equals":
        args = [f"{k}={v}" for k, v in flags.items()]
    else:
        args = [t for kv in flags.items() for t in kv]
    wisp = duplex(
        *args,
        "--system-prompt",
        "",
        "--setting-sources=user,project",
        "--task-budget",  # an SDK flag wisp does not implement: ignored, with a warning
        "5000",
    )
    answer = wisp.initialize()["response"]
    assert answer["current_permission_mode"] == "plan"
    wisp.user("hi")
    init = wisp.wait_frame("system", "init")
    assert wisp.finish() == 0
    assert init["model"] == "claude-sonnet-4-5"
    assert server.requests[0].body["model"] == "claude-sonnet-4-5"
    assert "ignoring options wisp does not support: --task-budget\n" in wisp.stderr


def test_print_flag_is_optional_in_duplex_mode(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex("-p")
    wisp.user("hi")
    assert wisp.finish() == 0
    assert wisp.results()[0]["result"] == "ok"


def test_exit_within_seconds_of_eof_and_no_output_after_exit(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    wisp.initialize()
    wisp.user("hi")
    wisp.wait_frame("result")
    started = time.monotonic()
    assert wisp.finish() == 0
    assert time.monotonic() - started < 5


def test_the_early_initialize_answer_matches_the_regular_one(duplex):
    """The first-line initialize is answered before the engine loads; one that is not
    the first line by the regular handler. Same request, same answer. (A second
    initialize in one session is a host attaching again: tests/duplex/test_reattach.py.)"""
    request = {
        "hooks": {"Stop": [{"matcher": None, "hookCallbackIds": ["hook_0"]}]},
        "agents": {"helper": {"description": "Helps", "prompt": "Help."}},
        "disallowedTools": ["WebFetch"],
        "settings": {"model": "sonnet"},
    }
    first = duplex()
    early = first.initialize(**request)["response"]
    assert first.finish() == 0
    second = duplex()
    second.send({"type": "keep_alive"})  # initialize is not the first line: no early answer
    late = second.initialize(**request)["response"]
    assert second.finish() == 0
    early.pop("pid"), late.pop("pid")
    assert early == late
    assert early["agents"] == [{"name": "helper", "description": "Helps"}]


def test_the_early_answer_follows_settings_default_mode(duplex, server, wisp):
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"defaultMode": "acceptEdits"}}')
    wisp.trust()  # a widening mode applies only from a trusted folder's settings
    server.script(reply.text("ok"))
    proc = duplex()
    assert proc.initialize()["response"]["current_permission_mode"] == "acceptEdits"
    proc.user("hi")
    assert proc.wait_frame("system", "init")["permissionMode"] == "acceptEdits"
    assert proc.finish() == 0


def test_a_missing_resume_fails_before_any_answer(duplex):
    proc = duplex("--resume", "00000000-0000-4000-8000-000000000000")
    with contextlib.suppress(BrokenPipeError):  # it may be gone already
        proc.send(
            {
                "type": "control_request",
                "request_id": "req_1",
                "request": {"subtype": "initialize", "hooks": None},
            }
        )
    assert proc.finish() == 1
    assert proc.of("control_response") == []
    assert "00000000-0000-4000-8000-000000000000" in proc.stderr


def test_replay_user_messages_echoes_each_prompt(duplex, server):
    server.script(reply.text("a"), reply.text("b"))
    wisp = duplex("--replay-user-messages")
    wisp.user("first")
    wisp.user([{"type": "text", "text": "second"}])
    wisp.wait_frame("result", count=2)
    assert wisp.finish() == 0
    replays = [f for f in wisp.of("user") if f.get("isReplay") is True]
    assert [r["message"]["content"] for r in replays] == [
        "first", [{"type": "text", "text": "second"}]]
    assert all(r["parent_tool_use_id"] is None for r in replays)


def test_replay_user_messages_needs_stream_json_both_ways(wisp, server):
    run = wisp("-p", "x", "--replay-user-messages")
    assert run.returncode == 1
    assert "--replay-user-messages requires" in run.stderr
