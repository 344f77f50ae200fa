"""The real client against the real scripted server, over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError, Unreachable
from wisp.models.accumulate import accumulate
from wisp.models.anthropic import AnthropicConfig, AnthropicModel, AnthropicStream
from wisp.models.base import ModelRequest
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply, Served

JSON = dict[str, Any]


def make_request(**overrides: Any) -> ModelRequest:
    fields: JSON = {
        "model": "claude-test-1",
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 100,
    }
    fields.update(overrides)
    return ModelRequest(**fields)


def model_for(server: ScriptedServer, **config: Any) -> AnthropicModel:
    return AnthropicModel(AnthropicConfig(base_url=server.url, api_key="sk-test", **config))


async def collect(model: AnthropicModel, request: ModelRequest) -> tuple[list[JSON], JSON, str]:
    events: list[JSON] = []
    snapshot: JSON | None = None
    async with model.stream(request) as stream:
        async for event in stream:
            events.append(event)
            snapshot = accumulate(snapshot, event)
    assert snapshot is not None and stream.request_id is not None
    return events, snapshot, stream.request_id


def run(model: AnthropicModel, request: ModelRequest | None = None) -> tuple[list[JSON], JSON]:
    events, message, _ = asyncio.run(collect(model, request or make_request()))
    return events, message


@pytest.fixture
def refused_port() -> Iterator[int]:
    # A bound socket that never listens: connecting to it is refused, with no race.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_text_reply_is_folded_into_the_complete_message(server: ScriptedServer) -> None:
    server.script(reply.text("Hello from the scripted server", chunks=4))
    events, message, request_id = asyncio.run(collect(model_for(server), make_request()))
    kinds = [e["type"] for e in events]
    assert kinds == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * 4,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]  # the server's ping was dropped
    assert message["content"] == [{"type": "text", "text": "Hello from the scripted server"}]
    assert message["role"] == "assistant"
    assert message["model"] == "claude-test-1"
    assert message["id"].startswith("msg_")
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["output_tokens"] >= 1
    body_size = int(server.requests[0].headers["content-length"])
    assert message["usage"]["input_tokens"] == body_size // 4
    assert request_id.startswith("req_")


def test_tool_use_input_is_assembled_from_json_deltas(server: ScriptedServer) -> None:
    tool_input = {"command": "ls -la ünïcode", "nested": {"list": [1, 2.5, None, True]}}
    server.script(
        reply.tool_use("Bash", tool_input, id="toolu_fixed", text="Let me look.", chunks=5)
    )
    events, message = run(model_for(server))
    json_deltas = [e for e in events if e.get("delta", {}).get("type") == "input_json_delta"]
    assert len(json_deltas) == 5
    assert message["stop_reason"] == "tool_use"
    assert message["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_fixed", "name": "Bash", "input": tool_input},
    ]


def test_several_tool_uses_and_thinking(server: ScriptedServer) -> None:
    server.script(
        reply.tool_uses([("Read", {"file_path": "/a"}), ("Read", {"file_path": "/b"})]),
        reply.thinking("let me think", "answer", signature="sig-1"),
    )
    model = model_for(server)
    _, first = run(model)
    assert [b["input"] for b in first["content"]] == [{"file_path": "/a"}, {"file_path": "/b"}]
    assert all(b["id"].startswith("toolu_") for b in first["content"])
    _, second = run(model)
    assert second["content"] == [
        {"type": "thinking", "thinking": "let me think", "signature": "sig-1"},
        {"type": "text", "text": "answer"},
    ]


def test_a_single_sse_line_over_one_megabyte_arrives_whole(server: ScriptedServer) -> None:
    big = "x" * 700_000 + "é" * 400_000  # > 1.5 MB of UTF-8 in one data line
    server.script(reply.text(big, chunks=1))
    _, message = run(model_for(server))
    assert message["content"][0]["text"] == big


def test_a_400_is_a_plain_error_with_the_server_message(server: ScriptedServer) -> None:
    server.script(reply.error(400, "messages: field required"))
    with pytest.raises(ModelAPIError) as caught:
        run(model_for(server))
    assert not isinstance(caught.value, RetryableAPIError)
    assert caught.value.status == 400
    assert caught.value.message == "messages: field required"
    assert caught.value.error_type == "invalid_request_error"


@pytest.mark.parametrize(
    ("status", "error_type"), [(529, "overloaded_error"), (500, "api_error"), (429, None)]
)
def test_overload_and_server_errors_are_retryable(
    server: ScriptedServer, status: int, error_type: str | None
) -> None:
    server.script(reply.error(status, "try later", retry_after=2.5))
    with pytest.raises(RetryableAPIError) as caught:
        run(model_for(server))
    assert caught.value.status == status
    assert caught.value.message == "try later"
    assert caught.value.retry_after == 2.5
    if error_type:
        assert caught.value.error_type == error_type


def test_connection_refused_is_retryable_and_fast(refused_port: int) -> None:
    model = AnthropicModel(AnthropicConfig(base_url=f"http://127.0.0.1:{refused_port}"))
    started = time.monotonic()
    with pytest.raises(RetryableAPIError) as caught:
        run(model)
    assert time.monotonic() - started < 5.0  # no retries inside the model: wide for load
    assert caught.value.status is None
    assert isinstance(caught.value, Unreachable)
    assert str(caught.value) == f"cannot reach http://127.0.0.1:{refused_port} (connection refused)"
    assert caught.value.cause == "refused"
    assert caught.value.hint == (f"nothing listens at http://127.0.0.1:{refused_port} "
                                 "(connection refused) — is ANTHROPIC_BASE_URL right?")


def test_a_stream_cut_mid_chunk_raises_stream_cut_error(server: ScriptedServer) -> None:
    server.script(reply.cut(after_events=4, base=reply.text("hello there friend")))
    seen: list[JSON] = []

    async def consume() -> None:
        async with model_for(server).stream(make_request()) as stream:
            async for event in stream:
                seen.append(event)

    with pytest.raises(StreamCutError, match="ended early"):
        asyncio.run(consume())
    assert [e["type"] for e in seen] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
    ]


class _NoMessageStop(Reply):
    """A stream that ends cleanly (terminating chunk sent) without message_stop."""

    def render(self, body: JSON, body_size: int) -> Served:
        served = reply.text("partial").render(body, body_size)
        return Served(events=served.events[:-1])


def test_a_clean_end_without_message_stop_is_a_stream_cut(server: ScriptedServer) -> None:
    server.script(_NoMessageStop())
    with pytest.raises(StreamCutError, match="Stream ended before message_stop"):
        run(model_for(server))


def test_a_missing_final_chunk_after_message_stop_is_not_an_error(server: ScriptedServer) -> None:
    base = reply.text("complete")
    server.script(reply.cut(after_events=100, base=base))
    _, message = run(model_for(server))
    assert message["content"][0]["text"] == "complete"


def test_malformed_sse_is_not_retryable(server: ScriptedServer) -> None:
    server.script(reply.malformed())
    with pytest.raises(ModelAPIError, match="Malformed SSE event from the API") as caught:
        run(model_for(server))
    assert not isinstance(caught.value, RetryableAPIError)


def test_an_overloaded_sse_error_is_retryable(server: ScriptedServer) -> None:
    server.script(reply.sse_error("overloaded_error", "Overloaded"))
    with pytest.raises(RetryableAPIError) as caught:
        run(model_for(server))
    assert (caught.value.status, caught.value.error_type) == (529, "overloaded_error")
    assert caught.value.message == "Overloaded"


def test_other_sse_errors_are_not_retryable(server: ScriptedServer) -> None:
    server.script(reply.sse_error("invalid_request_error", "bad"))
    with pytest.raises(ModelAPIError, match="bad") as caught:
        run(model_for(server))
    assert not isinstance(caught.value, RetryableAPIError)


def test_the_request_is_recorded_with_headers_and_body(server: ScriptedServer) -> None:
    server.script(reply.text("ok"))
    model = model_for(
        server,
        auth_token="tok-1",
        betas=("beta-one", "beta-two"),
        headers=(("X-Custom", "custom value"),),
    )
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi ✓"}]},
        {"role": "system", "content": [{"type": "text", "text": "environment"}]},
    ]
    request = make_request(
        messages=messages, session_id="sess-1", system=[{"type": "text", "text": "S"}]
    )
    run(model, request)
    [recorded] = server.requests
    assert (recorded.method, recorded.path) == ("POST", "/v1/messages")
    assert recorded.body == request.body()
    headers = recorded.headers
    assert headers["content-type"] == "application/json"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["user-agent"].startswith("wisp/")
    assert headers["x-api-key"] == "sk-test"
    assert headers["authorization"] == "Bearer tok-1"
    assert headers["anthropic-beta"] == "beta-one,beta-two"
    assert headers["x-claude-code-session-id"] == "sess-1"
    assert headers["x-custom"] == "custom value"
    assert "accept-encoding" not in headers  # we cannot decompress, so we must not ask


def test_a_base_url_path_prefix_is_kept(server: ScriptedServer) -> None:
    server.script(reply.text("ok"))
    model = AnthropicModel(AnthropicConfig(base_url=server.url + "/gateway/anthropic/"))
    run(model)
    assert server.requests[0].path == "/gateway/anthropic/v1/messages"


def test_an_exhausted_script_answers_400(server: ScriptedServer) -> None:
    with pytest.raises(ModelAPIError) as caught:
        run(model_for(server))
    assert caught.value.status == 400
    assert caught.value.message == "wisp.testing: no scripted reply left"


def test_closing_a_slow_stream_midway_returns_promptly(server: ScriptedServer) -> None:
    server.script(reply.slow("a reply that would take many seconds", delay_per_event=0.5))

    async def interrupt() -> float:
        async with model_for(server).stream(make_request()) as stream:
            async for event in stream:
                assert event["type"] == "message_start"
                break
            started = time.monotonic()
        return time.monotonic() - started

    assert asyncio.run(interrupt()) < 0.2


def test_closing_from_another_task_ends_the_iteration_quietly(server: ScriptedServer) -> None:
    server.script(reply.slow("a reply that would take many seconds", delay_per_event=0.5))

    async def scenario() -> list[str]:
        seen: list[str] = []
        first = asyncio.Event()
        stream: AnthropicStream = model_for(server).stream(make_request())
        await stream.__aenter__()

        async def reader() -> None:
            async for event in stream:
                seen.append(event["type"])
                first.set()

        task = asyncio.create_task(reader())
        await first.wait()
        await stream.aclose()
        await asyncio.wait_for(task, 1.0)  # ends without StreamCutError
        return seen

    assert asyncio.run(scenario()) == ["message_start"]


def test_a_stalled_stream_times_out(server: ScriptedServer) -> None:
    server.script(reply.slow("stalls", delay_per_event=30))
    started = time.monotonic()
    with pytest.raises(RetryableAPIError, match="timed out"):
        run(model_for(server, timeout=0.2))
    assert time.monotonic() - started < 5


def test_iterating_without_async_with_opens_the_stream(server: ScriptedServer) -> None:
    server.script(reply.text("lazy"))

    async def consume() -> list[str]:
        stream = model_for(server).stream(make_request())
        kinds = [event["type"] async for event in stream]
        await stream.aclose()
        return kinds

    assert asyncio.run(consume())[-1] == "message_stop"
