"""Whatever a settings hook prints, the run ends with a result, and the model sees at most
about 50 KB of it, head and tail kept, with the size of the cut said in between.

Before: a 200 KB stdout line hit asyncio's 64 KiB readline limit, deeply nested JSON
raised RecursionError (both ended the run with no result frame), and 1 MiB of exit-2
stderr reached the model uncut.
"""

from __future__ import annotations

from tests.robustness.helpers import STREAM, model_requests, python_hook
from wisp.testing import reply

CAP = 50_000
SLACK = 200  # the truncation marker and the wrapping the context gets in a request


def longest_text(value) -> str:
    """The longest string anywhere in `value`: what the hook put before the model."""
    if isinstance(value, str):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return max((longest_text(v) for v in items), key=len, default="")


def hook_context(server) -> str:
    return longest_text(model_requests(server)[0]["messages"])


def assert_cut(text: str, head: str, tail: str, total: int) -> None:
    assert head in text and tail in text  # both ends kept
    assert "characters truncated]" in text  # and the size of the cut said
    assert CAP - SLACK < len(text) < CAP + SLACK, len(text)
    assert len(text) < total


def test_a_200_kb_stdout_line_is_streamed_and_reaches_the_model_capped(wisp, server):
    python_hook(wisp, "UserPromptSubmit", "print('HEAD' + 'x' * 200_000 + 'TAIL')")
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM, "--include-hook-events")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    assert_cut(hook_context(server), "HEADxxx", "xxxTAIL", 200_008)
    (progress,) = run.of_type("system", "hook_progress")  # one line, however long
    assert progress["stdout"].startswith("HEADxxx") and progress["stdout"].endswith("xxxTAIL")
    (response,) = run.of_type("system", "hook_response")
    assert response["exit_code"] == 0 and len(response["stdout"]) < CAP + SLACK


def test_100000_nested_brackets_are_plain_context_capped(wisp, server):
    python_hook(wisp, "UserPromptSubmit", "print('[' * 100_000 + 'END')")
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    assert_cut(hook_context(server), "[[[[", "[[[END", 100_003)


def test_deeply_nested_json_is_a_handled_error_read_as_plain_text(wisp, server):
    python_hook(wisp, "UserPromptSubmit", "print('{\"a\":' * 100_000 + '1' + '}' * 100_000)")
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM, "--include-hook-events")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    (response,) = run.of_type("system", "hook_response")
    assert "nested deeper than" in response["error"]
    assert "nested deeper than" in run.stderr  # said to the user as well
    assert_cut(hook_context(server), '{"a":{"a":', "}}}}", 600_001)


def test_exit_2_stderr_of_1_mib_reaches_the_model_capped(wisp, server):
    code = (
        "import sys\n"
        "sys.stderr.write('FIRST' + 'e' * (1 << 20) + 'LAST')\n"
        "sys.exit(2)\n"
    )
    python_hook(wisp, "PreToolUse", code, matcher="Glob")
    server.script(reply.tool_use("Glob", {"pattern": "*"}), reply.text("blocked"))
    run = wisp("-p", "look", *STREAM)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    sent = model_requests(server)[1]["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and sent["is_error"] is True
    assert_cut(longest_text(sent["content"]), "FIRSTeee", "eeeLAST", 1 << 20)


def test_a_json_answer_with_a_huge_context_is_capped(wisp, server):
    answer = "{'hookSpecificOutput': {'additionalContext': 'A' + 'c' * 300_000 + 'Z'}}"
    python_hook(wisp, "UserPromptSubmit", f"import json; print(json.dumps({answer}))")
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", *STREAM)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_cut(hook_context(server), "Accc", "cccZ", 300_002)
