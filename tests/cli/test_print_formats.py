"""Print mode (-p): the three output formats and the reference's validation matrix."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import wisp_command
from wisp.testing import reply


def test_text_output_prints_the_result(wisp, server):
    server.script(reply.text("hello from fake"))
    run = wisp("-p", "say hi")
    assert run.returncode == 0
    assert run.stdout == "hello from fake\n"


def test_json_output_is_one_result_object(wisp, server):
    server.script(reply.text("hello from fake"))
    run = wisp("-p", "say hi", "--output-format", "json")
    assert run.returncode == 0
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["type"] == "result"
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "hello from fake"
    assert result["num_turns"] == 1
    for key in ("duration_ms", "duration_api_ms", "session_id", "usage", "modelUsage",
                "total_cost_usd", "permission_denials", "uuid", "stop_reason"):
        assert key in result, key
    assert result["stop_reason"] == "end_turn"


def test_stream_json_frame_order(wisp, server):
    server.script(reply.text("hello from fake"))
    run = wisp("-p", "say hi", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    assert run.kinds() == ["system/init", "assistant", "result"]
    init, assistant, result = run.frames
    assert init["session_id"] == assistant["session_id"] == result["session_id"]
    assert init["claude_code_version"]
    assert "Bash" in init["tools"]
    assert assistant["parent_tool_use_id"] is None
    assert assistant["message"]["content"] == [{"type": "text", "text": "hello from fake"}]
    assert assistant["message"]["model"]
    assert result["errors"] == []


def test_json_verbose_prints_one_array_of_every_message(wisp, server):
    server.script(reply.text("hi"))
    run = wisp("-p", "x", "--output-format", "json", "--verbose")
    assert run.returncode == 0
    frames = json.loads(run.stdout)
    assert [f["type"] for f in frames] == ["system", "assistant", "result"]


def test_stream_json_without_verbose_is_refused_before_any_api_call(wisp, server):
    run = wisp("-p", "x", "--output-format", "stream-json")
    assert run.returncode == 1
    assert "--output-format=stream-json requires --verbose" in run.stderr
    assert server.requests == []


def test_stream_json_input_needs_stream_json_output(wisp, server):
    for fmt in ("text", "json"):
        run = wisp("-p", "--input-format", "stream-json", "--output-format", fmt)
        assert run.returncode == 1
        assert "--input-format=stream-json requires output-format=stream-json." in run.stderr
    assert server.requests == []


def test_partial_messages_need_stream_json(wisp, server):
    run = wisp("-p", "say hi", "--include-partial-messages")
    assert run.returncode == 1
    assert "--include-partial-messages requires --print and --output-format=stream-json." in (
        run.stderr)


def test_no_prompt_is_an_error(wisp, server):
    run = wisp("-p", input="")
    assert run.returncode == 1
    assert "Input must be provided either through stdin or as a prompt argument" in run.stderr
    assert server.requests == []


def test_prompt_from_stdin(wisp, server):
    server.script(reply.text("ok"))
    run = wisp("-p", input="piped prompt\n")
    assert run.returncode == 0
    assert run.stdout == "ok\n"
    messages = server.requests[0].body["messages"]
    assert messages[0]["content"] == "piped prompt"


def test_piped_input_follows_a_prompt_argument(wisp, server):
    """`git diff | wisp -p "review this"`: the argument, a newline, then what was piped, as
    the reference sends it (measured: "PROMPT-ARG\\nPIPED-LINE-1\\nPIPED-LINE-2\\n")."""
    server.script(reply.text("ok"))
    run = wisp("-p", "review this", input="line one\nline two\n")
    assert run.returncode == 0 and "Warning" not in run.stderr
    assert server.requests[0].body["messages"][0]["content"] == (
        "review this\nline one\nline two\n")


def test_a_stdin_that_never_speaks_does_not_hang_a_prompt_argument(wisp, server):
    """A parent that leaves stdin open and silent: wisp waits its grace period, says so,
    and answers the argument alone."""
    server.script(reply.text("ok"))
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.run([*wisp_command(), "-p", "just this"], stdin=read_end,
                              cwd=wisp.cwd, env=wisp.env, capture_output=True, text=True,
                              timeout=60, check=False)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    assert "no stdin data received" in proc.stderr
    assert server.requests[0].body["messages"][0]["content"] == "just this"


def test_flags_accept_equals_form_and_unsupported_flags_warn(wisp, server):
    """A reference flag wisp does not implement is ignored with a warning (unknown ones are
    errors: tests/cli/test_typos.py)."""
    server.script(reply.text("ok"))
    run = wisp("-p", "x", "--output-format=json", "--remote-control-session-name-prefix", "v")
    assert run.returncode == 0
    assert json.loads(run.stdout)["result"] == "ok"
    assert run.stderr == ("wisp: warning: ignoring options wisp does not support: "
                          "--remote-control-session-name-prefix\n")


def test_version_is_printed():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "wisp", "--version"], capture_output=True,
                          text=True, check=True)
    assert "wisp" in proc.stdout


def test_thinking_blocks_stream_as_their_own_assistant_frames(wisp, server):
    server.script(reply.thinking("let me think", "the answer", signature="sig-1"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    blocks = [f["message"]["content"] for f in run.of_type("assistant")]
    assert blocks == [[{"type": "thinking", "thinking": "let me think", "signature": "sig-1"}],
                      [{"type": "text", "text": "the answer"}]]
    ids = {f["message"]["id"] for f in run.of_type("assistant")}
    assert len(ids) == 1  # one API message, one frame per block
    assert run.result["result"] == "the answer"


def test_a_thinking_history_is_sent_back_with_its_signature(wisp, server):
    server.script(reply.message([{"type": "thinking", "thinking": "plan", "signature": "sig-2"},
                                 {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {"command": "echo hi"}}], stop_reason="tool_use"),
                  reply.text("done"))
    assert wisp("-p", "x").returncode == 0
    sent = server.requests[1].body["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": "plan", "signature": "sig-2"}


def test_text_output_of_an_api_error_says_what_failed(wisp, server):
    server.script(reply.error(400, "bad request here"))
    run = wisp("-p", "hi", "--output-format", "text")
    assert run.returncode == 1
    assert run.stdout == "API Error: 400 bad request here\n"
