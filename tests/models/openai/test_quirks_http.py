"""Server quirks as scenarios of the scripted server: exact frames, write boundaries and
status codes over real HTTP, through the real `wisp -p` (openai-compat-quirks.md §1)."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
STREAM = ("--output-format", "stream-json", "--verbose")


def c(delta: JSON | None = None, finish: str | None = None) -> JSON:
    return {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 0,
            "model": "m", "choices": [{"index": 0, "delta": delta or {},
                                       "finish_reason": finish}]}


USAGE = {"id": "chatcmpl-q", "choices": [], "usage": {"prompt_tokens": 11,
                                                      "completion_tokens": 3}}
HELLO = [c({"role": "assistant", "content": ""}), c({"content": "Hel"}), c({"content": "lo"}),
         c(finish="stop"), USAGE, "[DONE]"]


def answer(run: Any) -> str:
    assert run.returncode == 0, run.stderr + run.stdout
    return str(run.result["result"])


def test_comments_keepalives_and_crlf(oa_wisp: Runner, server: ScriptedServer) -> None:
    frames: list[Any] = [": OPENROUTER PROCESSING\n\n", ":\n\n", ": ping - 2026\r\n\r\n",
                         *HELLO[:2], "data: " + json.dumps(c({"content": "lo"})) + "\r\n\r\n",
                         *HELLO[3:]]
    server.script(reply.openai_raw(frames))
    assert answer(oa_wisp("-p", "hi", *STREAM)) == "Hello"


@pytest.mark.parametrize("seed", range(6))
def test_any_write_boundaries_down_to_one_byte(oa_wisp: Runner, server: ScriptedServer,
                                               seed: int) -> None:
    think = [c({"content": "<think>pl"}), c({"content": "an</th"}), c({"content": "ink>Done"}),
             c(finish="stop"), "[DONE]"]
    size = sum(len(f"data: {json.dumps(f, separators=(',', ':'))}\n\n") if isinstance(f, dict)
               else len("data: [DONE]\n\n") for f in think)
    rng = random.Random(seed)
    if seed == 0:
        server.script(reply.openai_raw(think, byte_by_byte=True))
    else:
        server.script(reply.openai_raw(think, split_at=sorted(rng.sample(range(1, size), 25))))
    run = oa_wisp("-p", "hi", *STREAM)
    assert answer(run) == "Done"
    blocks = [b for f in run.of_type("assistant") for b in f["message"]["content"]]
    assert blocks[0] == {"type": "thinking", "thinking": "plan", "signature": ""}


def test_an_error_object_mid_stream_is_retried(oa_wisp: Runner, server: ScriptedServer) -> None:
    broken = [c({"content": "par"}), c({"content": "tial"}),
              {"error": {"message": "Worker local total request limit reached", "code": None}}]
    server.script(reply.openai_raw(broken), reply.openai_raw(HELLO))
    run = oa_wisp("-p", "hi", *STREAM)
    assert answer(run) == "Hello"
    assert len(run.of_type("system", "api_retry")) == 1
    # What streamed before the error is dropped: one assistant message, the retried one.
    assert [b["text"] for f in run.of_type("assistant") for b in f["message"]["content"]] == [
        "Hello"]


def test_a_stream_cut_in_a_tool_call_runs_nothing(oa_wisp: Runner, server: ScriptedServer
                                                  ) -> None:
    marker = oa_wisp.cwd / "ran.txt"
    cut = [c({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {
        "name": "Bash", "arguments": '{"command": "touch ran.t'}}]})]
    server.script(reply.openai_raw(cut, close_after=True), reply.openai_raw(HELLO))
    run = oa_wisp("-p", "hi", "--allowedTools", "Bash", *STREAM)
    assert answer(run) == "Hello"
    assert not marker.exists()
    assert len(run.of_type("system", "api_retry")) == 1


def test_json_instead_of_a_stream(oa_wisp: Runner, server: ScriptedServer) -> None:
    body = {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": "whole"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    server.script(reply.openai_raw([body], content_type="application/json"))
    assert answer(oa_wisp("-p", "hi", *STREAM)) == "whole"


def test_a_connection_held_open_after_done_ends_the_turn_at_once(
        oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.openai_raw(HELLO, stall_after_done=20))
    started = time.monotonic()
    assert answer(oa_wisp("-p", "hi", *STREAM)) == "Hello"
    assert time.monotonic() - started < 10


def test_a_server_rejecting_stream_options_gets_it_dropped(oa_wisp: Runner,
                                                           server: ScriptedServer) -> None:
    rejection = {"error": {"message": "Unrecognized request argument supplied: stream_options",
                           "type": "invalid_request_error"}}
    server.script(reply.openai_raw([rejection], status=400), reply.openai_raw(HELLO))
    assert answer(oa_wisp("-p", "hi", *STREAM)) == "Hello"
    bodies = [r.body for r in server.requests if r.body]
    assert "stream_options" in bodies[0] and "stream_options" not in bodies[1]


@pytest.mark.parametrize("body", [
    {"error": "plain string error"},
    {"detail": "fastapi style"},
    {"object": "error", "message": "vllm style", "code": 400},
    {"success": False, "error": {"message": "wrapped", "code": None}},
])
def test_error_bodies_of_every_shape_fail_fast_with_their_message(
        oa_wisp: Runner, server: ScriptedServer, body: JSON) -> None:
    server.script(reply.openai_raw([body], status=400))
    run = oa_wisp("-p", "hi", *STREAM)
    assert run.returncode == 1
    text = json.dumps(body)
    words = next(w for w in ("plain string error", "fastapi style", "vllm style", "wrapped")
                 if w in text)
    assert words in run.result["result"]


def test_a_template_error_500_is_not_retried(oa_wisp: Runner, server: ScriptedServer) -> None:
    jinja = {"error": {"message": "Jinja Exception: Conversation roles must alternate",
                       "type": "server_error"}}
    server.script(reply.openai_raw([jinja], status=500))
    run = oa_wisp("-p", "hi", *STREAM)
    assert run.returncode == 1
    assert run.of_type("system", "api_retry") == []


def test_retry_after_ms_and_reset_headers_are_honoured(oa_wisp: Runner,
                                                       server: ScriptedServer) -> None:
    limited = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    server.script(reply.openai_raw([limited], status=429, headers={"retry-after-ms": "30"}),
                  reply.openai_raw([limited], status=429, headers={
                      "x-ratelimit-remaining-requests": "0",
                      "x-ratelimit-reset-requests": "0.05s"}),
                  reply.openai_raw(HELLO))
    run = oa_wisp("-p", "hi", *STREAM, env={"WISP_RETRY_BASE_DELAY_MS": "1"})
    assert answer(run) == "Hello"
    delays = [f["retry_delay_ms"] for f in run.of_type("system", "api_retry")]
    assert len(delays) == 2 and delays[0] >= 30 and delays[1] >= 50


def test_a_context_length_error_compacts_and_retries(oa_wisp: Runner,
                                                     server: ScriptedServer) -> None:
    too_long = {"object": "error", "message": "This model's maximum context length is 8192 "
                "tokens. However, you requested 9000 tokens.", "code": 400}
    server.script(reply.text("first"), reply.openai_raw([too_long], status=400),
                  reply.text("the summary"), reply.text("after compaction"))
    first = oa_wisp("-p", "one", *STREAM)
    session = first.result["session_id"]
    run = oa_wisp("-p", "two", "--resume", session, *STREAM)
    assert answer(run) == "after compaction"
    assert run.of_type("system", "compact_boundary") or any(
        "summary" in json.dumps(r.body) for r in server.requests[3:])
    last = [r.body for r in server.requests if r.body][-1]
    assert "the summary" in json.dumps(last["messages"])
