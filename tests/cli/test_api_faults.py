"""Model API failures: retries with api_retry frames, fail-fast statuses, cut and broken streams."""

from __future__ import annotations

import json

import pytest

from wisp.testing import reply


def stream(wisp, *extra, env=None):
    return wisp("-p", "x", "--output-format", "stream-json", "--verbose", *extra, env=env)


def test_overloaded_twice_then_success(wisp, server):
    server.script(reply.error(529, "Overloaded"), reply.error(529, "Overloaded"), reply.text("ok"))
    run = stream(wisp)
    assert run.returncode == 0
    retries = run.of_type("system", "api_retry")
    assert [r["attempt"] for r in retries] == [1, 2]
    for frame in retries:
        assert frame["error_status"] == 529
        assert frame["max_retries"] == 3
        assert frame["retry_delay_ms"] >= 0
        assert "error" in frame
    assert run.result["result"] == "ok"


def test_retry_after_is_honoured(wisp, server):
    server.script(reply.error(429, "slow down", retry_after=0.2), reply.text("ok"))
    run = stream(wisp)
    assert run.returncode == 0
    assert run.of_type("system", "api_retry")[0]["retry_delay_ms"] == 200


def test_server_error_forever_gives_up_at_the_cap(wisp, server):
    server.script(*[reply.error(500, "fake 500 error") for _ in range(10)])
    run = wisp("-p", "x", "--output-format", "json", env={"CLAUDE_CODE_MAX_RETRIES": "2"})
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["is_error"] is True
    assert result["api_error_status"] == 500
    assert result["result"].startswith("API Error: 500 fake 500 error")
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_fail_fast(wisp, server, status):
    server.script(reply.error(status, f"fake {status} error"), reply.text("never"))
    run = stream(wisp)
    assert run.returncode == 1
    assert len(server.requests) == 1
    # A 401 also says whose key was refused (tests/cli/test_first_run.py has the rest).
    note = " · the API key from ANTHROPIC_API_KEY was refused" if status == 401 else ""
    assert run.result["result"] == f"API Error: {status} fake {status} error{note}"
    assert run.result["api_error_status"] == status
    assert run.result["is_error"] is True
    synthetic = run.of_type("assistant")[0]
    assert synthetic["message"]["model"] == "<synthetic>"
    assert synthetic["is_api_error_message"] is True


def test_connection_refused_is_retried_then_reported(wisp, server):
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "CLAUDE_CODE_MAX_RETRIES": "1"}
    run = wisp("-p", "x", "--output-format", "json", env=env)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["is_error"] is True
    assert "Connection" in result["result"] or "connect" in result["result"]
    assert "Traceback" not in run.stderr


def test_stream_cut_midway_is_retried_without_duplicates(wisp, server):
    server.script(reply.cut(after_events=3, base=reply.text("hello there friend")),
                  reply.text("hello there friend"))
    run = stream(wisp)
    assert run.returncode == 0
    assert len(server.requests) == 2
    assert len(run.of_type("system", "api_retry")) == 1
    texts = [b["text"] for f in run.of_type("assistant") for b in f["message"]["content"]]
    assert texts == ["hello there friend"]
    assert run.result["result"] == "hello there friend"


def test_cut_after_a_complete_block_continues_instead_of_repeating(wisp, server):
    two_blocks = reply.message([{"type": "text", "text": "first block"},
                                {"type": "text", "text": "second block"}])
    server.script(reply.cut(after_events=7, base=two_blocks), reply.text("second block"))
    run = stream(wisp)
    assert run.returncode == 0
    texts = [b["text"] for f in run.of_type("assistant") for b in f["message"]["content"]]
    assert texts.count("first block") == 1
    # The retry carries the shown block as a prefill so the model continues after it.
    retry_messages = server.requests[1].body["messages"]
    assert retry_messages[-1]["role"] == "assistant"
    assert retry_messages[-1]["content"][0]["text"] == "first block"


def test_malformed_sse_is_a_clear_error_result(wisp, server):
    server.script(reply.malformed(), reply.text("never"))
    run = stream(wisp)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.result["is_error"] is True
    assert "Malformed" in run.result["result"] or "malformed" in run.result["result"]


def test_overloaded_error_event_in_stream_is_retried(wisp, server):
    server.script(reply.sse_error("overloaded_error", "Overloaded"), reply.text("ok"))
    run = stream(wisp)
    assert run.returncode == 0
    assert len(run.of_type("system", "api_retry")) == 1


def test_fallback_model_used_once_when_main_model_not_found(wisp, server):
    server.script(reply.error(404, "model not found"), reply.text("from fallback"))
    run = stream(wisp, "--fallback-model", "sonnet")
    assert run.returncode == 0
    assert [r.body["model"] for r in server.requests] == ["claude-opus-5-5", "claude-sonnet-5-5"]
    assert run.of_type("system", "model_fallback")[0]["fallback_model"] == "claude-sonnet-5-5"


def test_fallback_after_repeated_overload(wisp, server):
    server.script(*[reply.error(529, "Overloaded") for _ in range(3)], reply.text("ok"))
    run = stream(wisp, "--fallback-model", "haiku")
    assert run.returncode == 0
    assert server.requests[-1].body["model"] == "claude-haiku-5-5"
