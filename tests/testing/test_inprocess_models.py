"""ScriptedModel and FunctionModel: the same script means the same thing in process as over
HTTP. The parity test runs each reply through ScriptedServer + AnthropicModel and through
ScriptedModel, and compares events, exceptions and recorded bodies."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError
from wisp.models.accumulate import fold
from wisp.models.anthropic import AnthropicConfig, AnthropicModel
from wisp.models.base import Model, ModelRequest
from wisp.testing import ControlChannel, FunctionModel, Reply, ScriptedModel, ScriptedServer, reply

JSON = dict[str, Any]
REQUEST = ModelRequest(model="claude-x", messages=[{"role": "user", "content": "hi"}],
                       max_tokens=10, session_id="sess-1")
IDS = re.compile(r'"(msg|toolu|sig)_[0-9a-f]{24}"')


async def collect(model: Model, request: ModelRequest = REQUEST) -> tuple[list[JSON], Any]:
    events: list[JSON] = []
    try:
        async with model.stream(request) as stream:
            async for event in stream:
                events.append(event)
    except ModelAPIError as exc:  # a model's failure; anything else is a bug and errors
        failure = (type(exc), str(exc), getattr(exc, "status", None),
                   getattr(exc, "error_type", None), getattr(exc, "retry_after", None))
        return events, failure
    return events, None


def without_ids(events: list[JSON]) -> str:
    import json

    return IDS.sub('"ID"', json.dumps(events))


PARITY: dict[str, Reply] = {
    "text": reply.text("hello world", usage={"cache_read_input_tokens": 3}),
    "tool_use": reply.tool_use("Bash", {"command": "ls"}, text="let me look"),
    "thinking": reply.thinking("hmm", "ok", signature="sig"),
    "max_tokens": reply.max_tokens("trunc"),
    "message": reply.message([{"type": "redacted_thinking", "data": "xyz"},
                              {"type": "text", "text": ""}], stop_reason=None),
    "error_429": reply.error(429, "slow down", retry_after=2),
    "error_400": reply.error(400, "bad"),
    "error_529": reply.error(529, "Overloaded"),
    "error_418": reply.error(418, "teapot", error_type="odd_error"),
    "cut_early": reply.cut(3),
    "cut_late": reply.cut(6, reply.tool_use("Read", {"file_path": "/etc/hosts"})),
    "cut_past_end": reply.cut(50),
    "malformed": reply.malformed(),
    "sse_error": reply.sse_error(),
    "sse_error_plain": reply.sse_error("invalid_request_error", "nope"),
    "raw_no_stop": reply.RawReply(()),
    "echo": reply.echo(),
    "dynamic_raises": reply.dynamic(lambda body: 1 / 0),  # type: ignore[arg-type,return-value]
}


@pytest.mark.parametrize("name", list(PARITY))
def test_scripted_model_matches_the_server_through_the_http_model(name: str) -> None:
    script = PARITY[name]

    async def both() -> tuple[Any, Any, JSON | None, JSON | None]:
        with ScriptedServer(script) as server:
            http = AnthropicModel(AnthropicConfig(base_url=server.url, api_key="sk-test"))
            over_http = await collect(http)
            await http.aclose()
            http_body = server.requests[0].body
        model = ScriptedModel(script)
        in_process = await collect(model)
        return over_http, in_process, http_body, model.requests[0].body

    over_http, in_process, http_body, model_body = asyncio.run(both())
    assert without_ids(in_process[0]) == without_ids(over_http[0])
    assert in_process[1] == over_http[1]
    assert model_body == http_body


def test_the_recorded_request_looks_like_the_servers() -> None:
    model = ScriptedModel(reply.text("a"))
    asyncio.run(collect(model))
    recorded = model.requests[0]
    assert (recorded.method, recorded.path) == ("POST", "/v1/messages")
    assert recorded.body is not None and recorded.body["stream"] is True
    assert recorded.headers["x-claude-code-session-id"] == "sess-1"
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert model.model_requests == [REQUEST]
    # A copy: changing the request later does not rewrite what was recorded.
    REQUEST.messages.append({"role": "assistant", "content": "x"})
    try:
        assert len(recorded.body["messages"]) == 1
    finally:
        REQUEST.messages.pop()


def test_an_exhausted_script_answers_400_or_the_default() -> None:
    async def run() -> None:
        model = ScriptedModel(reply.text("one"))
        assert (await collect(model))[1] is None
        events, failure = await collect(model)
        assert events == [] and failure[0] is ModelAPIError and failure[2] == 400
        assert "no scripted reply left" in failure[1]
        model.default = reply.text("again")
        assert fold((await collect(model))[0])["content"][0]["text"] == "again"
        model.script(reply.text("queued"))
        assert model.remaining == 1
        assert fold((await collect(model))[0])["content"][0]["text"] == "queued"

    asyncio.run(run())


def test_errors_raise_the_http_models_exception_types() -> None:
    async def run() -> None:
        cases = [(reply.error(429, "x"), RetryableAPIError), (reply.error(401, "x"),
                                                             ModelAPIError),
                 (reply.cut(2), StreamCutError), (reply.sse_error(), RetryableAPIError)]
        for script, kind in cases:
            _, failure = await collect(ScriptedModel(script))
            assert failure[0] is kind

    asyncio.run(run())


def test_usage_is_estimated_from_the_encoded_request_size() -> None:
    events, _ = asyncio.run(collect(ScriptedModel(reply.text("a"))))
    from wisp.models.body import encode_body

    assert events[0]["message"]["usage"]["input_tokens"] == len(encode_body(REQUEST.body())) // 4


def test_a_stream_closed_before_iteration_yields_nothing() -> None:
    async def run() -> list[JSON]:
        stream = ScriptedModel(reply.error(500, "not raised")).stream(REQUEST)
        await stream.aclose()
        return [e async for e in stream]

    assert asyncio.run(run()) == []


def test_leaving_the_stream_early_ends_iteration_quietly() -> None:
    async def run() -> list[str]:
        model = ScriptedModel(reply.slow("a b c d e f", 0.01, chunks=6))
        seen = []
        async with model.stream(REQUEST) as stream:
            async for event in stream:
                seen.append(event["type"])
                if event["type"] == "content_block_start":
                    await stream.__aexit__(None, None, None)
        return seen

    assert asyncio.run(run()) == ["message_start", "content_block_start"]


def test_a_slow_reply_can_be_cancelled() -> None:
    async def run() -> float:
        model = ScriptedModel(reply.slow("never finishes", 10.0))
        started = asyncio.get_running_loop().time()
        task = asyncio.ensure_future(collect(model))
        await model.wait_for_requests(1)
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return asyncio.get_running_loop().time() - started

    assert asyncio.run(run()) < 2


def test_wait_for_requests_times_out() -> None:
    with pytest.raises(TimeoutError, match="expected 1 requests, got 0"):
        asyncio.run(ScriptedModel().wait_for_requests(1, timeout=0.01))


def test_function_model_sync_async_and_strings() -> None:
    def sync(request: ModelRequest) -> Reply:
        return reply.tool_use("Read", {"file_path": request.messages[0]["content"]})

    async def asynchronous(request: ModelRequest) -> str:
        await asyncio.sleep(0)
        return f"model {request.model}"

    async def run() -> None:
        events, _ = await collect(FunctionModel(sync))
        assert fold(events)["content"][0]["input"] == {"file_path": "hi"}
        events, _ = await collect(FunctionModel(asynchronous))
        assert fold(events)["content"] == [{"type": "text", "text": "model claude-x"}]
        # A function that fails (or returns junk) answers 400, as a dynamic reply does.
        model = FunctionModel(lambda request: 42)  # type: ignore[arg-type,return-value]
        _, failure = await collect(model)
        assert failure[0] is ModelAPIError and "not a Reply" in failure[1]
        assert len(model.requests) == 1

    asyncio.run(run())


def test_the_channel_pipe_is_a_json_wire() -> None:
    async def run() -> None:
        async with ControlChannel() as channel:
            frame = {"type": "control_request", "request_id": "r", "request": {"t": (1, 2)}}
            channel.a_pipe.write(frame)
            assert channel.a_sent == [{**frame, "request": {"t": [1, 2]}}]
            with pytest.raises(TypeError):
                channel.a_pipe.write({"type": "x", "bad": object()})
        with pytest.raises(BrokenPipeError):
            channel.a_pipe.write({"type": "late"})

    asyncio.run(run())
