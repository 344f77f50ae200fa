"""The scripted server's Chat Completions route, seen by the official `openai` client (a
test-only dependency: wisp never imports it) and, for the raw quirks, by plain sockets."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import openai
import pytest

from wisp.errors import ModelAPIError
from wisp.testing import ScriptedModel, ScriptedServer, reply

JSON = dict[str, Any]
USER = [{"role": "user", "content": "hi"}]


def client(server: ScriptedServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=server.openai_url, max_retries=0)


def chunks_of(server: ScriptedServer, **extra: Any) -> list[JSON]:
    stream = client(server).chat.completions.create(
        model="gpt-test", messages=USER, stream=True, **extra  # type: ignore[arg-type]
    )
    return [chunk.model_dump(exclude_unset=True) for chunk in stream]


def exchange(
    server: ScriptedServer, body: JSON | bytes, path: str = "/v1/chat/completions"
) -> tuple[bytes, bytes, float]:
    """One request on a fresh socket, read to EOF: (head, body as sent, seconds from the
    first body byte to EOF). `Connection: close` makes a proper end close it too."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
            % (path.encode(), len(payload), payload)
        )
        raw, first = b"", 0.0
        while data := sock.recv(65536):
            first = first or time.monotonic()
            raw += data
        waited = time.monotonic() - first
    head, _, rest = raw.partition(b"\r\n\r\n")
    return head, rest, waited


def dechunk(body: bytes) -> tuple[list[bytes], bool]:
    """The chunks of a chunked body, and whether it ended with the zero-length chunk."""
    chunks = []
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return chunks, True
        chunks.append(body[:size])
        body = body[size + 2 :]
    return chunks, False


def stream_body(**extra: Any) -> JSON:
    return {"model": "gpt-test", "messages": USER, "stream": True, **extra}


def test_a_streamed_text_has_the_role_deltas_finish_and_usage_chunks(
    server: ScriptedServer,
) -> None:
    server.script(reply.text("hello world", chunks=3, usage={"output_tokens": 7}))
    chunks = chunks_of(server, stream_options={"include_usage": True})
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1 and chunks[0]["id"].startswith("chatcmpl-")
    assert {c["model"] for c in chunks} == {"gpt-test"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    texts = [c["choices"][0]["delta"]["content"] for c in chunks[1:4]]
    assert texts == ["hell", "o wo", "rld"]
    assert chunks[4]["choices"][0] == {
        "index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"
    }
    assert chunks[5]["choices"] == []
    usage = chunks[5]["usage"]
    assert usage["completion_tokens"] == 7
    assert usage["total_tokens"] == usage["prompt_tokens"] + 7
    assert usage["prompt_tokens"] == int(server.requests[0].headers["content-length"]) // 4
    assert len(chunks) == 6
    assert server.requests[0].path == "/v1/chat/completions"


def test_the_stream_ends_with_done_and_has_no_usage_unless_asked(
    server: ScriptedServer,
) -> None:
    server.script(reply.text("hi", chunks=1))
    head, body, _ = exchange(server, stream_body())
    assert b"text/event-stream" in head and b"x-request-id: req_" in head
    frames, terminated = dechunk(body)
    assert terminated and frames[-1] == b"data: [DONE]\n\n"
    assert all(f.startswith(b"data: {") for f in frames[:-1])
    assert all(b'"usage"' not in f for f in frames)
    assert json.loads(frames[-2][6:])["choices"][0]["finish_reason"] == "stop"


def test_a_streamed_tool_call_assembles_with_the_sdk_helpers(server: ScriptedServer) -> None:
    server.script(
        reply.tool_use("Bash", {"command": "ls -la"}, id="call_abc", text="let me see", chunks=4)
    )
    with client(server).chat.completions.stream(model="gpt-test", messages=USER) as stream:
        completion = stream.get_final_completion()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "let me see"
    [call] = choice.message.tool_calls or []
    assert call.id == "call_abc" and call.type == "function"
    assert call.function.name == "Bash"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"command": "ls -la"}  # type: ignore[union-attr]


def test_tool_arguments_come_in_as_many_fragments_as_anthropic_deltas(
    server: ScriptedServer,
) -> None:
    server.script(reply.tool_use("Read", {"file_path": "/etc/hosts"}, chunks=5))
    chunks = chunks_of(server)
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
             if c["choices"][0]["delta"].get("tool_calls")]
    head, fragments = calls[0], calls[1:]
    assert head["index"] == 0 and head["type"] == "function"
    assert head["id"].startswith("call_")  # a generated toolu_ id is renamed
    assert head["function"] == {"name": "Read", "arguments": ""}
    assert len(fragments) == 5
    assert all(set(f) == {"index", "function"} for f in fragments)
    arguments = "".join(f["function"]["arguments"] for f in fragments)
    assert json.loads(arguments) == {"file_path": "/etc/hosts"}


def test_two_parallel_tool_calls(server: ScriptedServer) -> None:
    server.script(reply.tool_uses([("Read", {"file_path": "a"}), ("Glob", {"pattern": "*"})]))
    with client(server).chat.completions.stream(model="gpt-test", messages=USER) as stream:
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["Read", "Glob"]  # type: ignore[union-attr]
    args = [json.loads(c.function.arguments) for c in calls]  # type: ignore[union-attr]
    assert args == [{"file_path": "a"}, {"pattern": "*"}]
    assert len({c.id for c in calls}) == 2
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_thinking_streams_in_the_field_the_reply_chose(
    server: ScriptedServer, field: str
) -> None:
    server.script(reply.thinking("let me think", "42", reasoning=field))  # type: ignore[arg-type]
    _, body, _ = exchange(server, stream_body())
    frames, _ = dechunk(body)
    deltas = [json.loads(f[6:])["choices"][0]["delta"] for f in frames[:-1]]
    assert "".join(d.get(field, "") for d in deltas) == "let me think"
    assert "".join(d.get("content", "") for d in deltas) == "42"
    other = {"reasoning_content", "reasoning"} - {field}
    assert not any(other & set(d) for d in deltas)


def test_thinking_as_inline_think_tags(server: ScriptedServer) -> None:
    server.script(reply.thinking("hmm", "yes", reasoning="think_tags"))
    chunks = chunks_of(server)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "<think>hmm</think>yes"
    server.script(reply.thinking("hmm", "yes", reasoning="think_tags"))
    completion = client(server).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "<think>hmm</think>yes"


def test_a_request_without_stream_gets_one_completion(server: ScriptedServer) -> None:
    server.script(
        reply.text("hello", usage={"output_tokens": 3, "cache_read_input_tokens": 10}),
        reply.tool_use("Bash", {"command": "ls"}, id="call_1"),
        reply.thinking("deep", "shallow"),
        reply.max_tokens("trunc"),
    )
    api = client(server)
    first = api.chat.completions.create(model="gpt-test", messages=USER)
    assert first.object == "chat.completion" and first.id.startswith("chatcmpl-")
    assert first.model == "gpt-test"
    assert first.choices[0].message.content == "hello"
    assert first.choices[0].finish_reason == "stop"
    assert first.usage is not None and first.usage.completion_tokens == 3
    assert first.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 10
    assert first.usage.prompt_tokens >= 10
    second = api.chat.completions.create(model="gpt-test", messages=USER)
    message = second.choices[0].message
    assert message.content is None and second.choices[0].finish_reason == "tool_calls"
    [call] = message.tool_calls or []
    assert (call.id, call.function.name) == ("call_1", "Bash")  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"command": "ls"}  # type: ignore[union-attr]
    third = api.chat.completions.create(model="gpt-test", messages=USER)
    assert third.choices[0].message.model_extra == {"reasoning_content": "deep"}
    assert third.choices[0].message.content == "shallow"
    fourth = api.chat.completions.create(model="gpt-test", messages=USER)
    assert fourth.choices[0].finish_reason == "length"


def test_a_429_with_retry_after_is_a_rate_limit_error(server: ScriptedServer) -> None:
    server.script(reply.error(429, "slow down", retry_after=2))
    with pytest.raises(openai.RateLimitError) as caught:
        client(server).chat.completions.create(model="gpt-test", messages=USER, stream=True)
    error = caught.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "2"
    assert error.body == {
        "message": "slow down", "type": "requests", "param": None, "code": "rate_limit_exceeded"
    }
    assert error.code == "rate_limit_exceeded"


def test_a_401_is_an_authentication_error(server: ScriptedServer) -> None:
    server.script(reply.error(401, "Incorrect API key provided"))
    with pytest.raises(openai.AuthenticationError) as caught:
        client(server).chat.completions.create(model="gpt-test", messages=USER)
    assert caught.value.code == "invalid_api_key"
    assert "Incorrect API key" in caught.value.message


def test_an_error_type_of_the_reply_s_own_is_the_code(server: ScriptedServer) -> None:
    server.script(reply.error(400, "too long", error_type="context_length_exceeded"))
    with pytest.raises(openai.BadRequestError) as caught:
        client(server).chat.completions.create(model="gpt-test", messages=USER)
    assert caught.value.code == "context_length_exceeded"


def test_an_exhausted_script_is_a_400_in_openai_shape() -> None:
    with ScriptedServer() as server, pytest.raises(openai.BadRequestError) as caught:
        client(server).chat.completions.create(model="gpt-test", messages=USER)
    assert "no scripted reply left" in caught.value.message


def test_models_are_listed_for_openai_clients_only(server: ScriptedServer) -> None:
    server.script(reply.text("x"))
    api = client(server)
    api.chat.completions.create(model="gpt-seen", messages=USER)
    assert [m.id for m in api.models.list()] == ["wisp-test", "gpt-seen"]
    assert api.models.retrieve("anything").id == "anything"
    with ScriptedServer(models=("a", "b")) as other:
        assert [m.id for m in client(other).models.list()] == ["a", "b"]


def test_one_queue_serves_both_routes_in_arrival_order(server: ScriptedServer) -> None:
    server.script(reply.text("first"), reply.text("second"))
    _, body, _ = exchange(
        server, {"model": "claude-x", "max_tokens": 5, "messages": USER}, "/v1/messages"
    )
    assert json.loads(body)["content"] == [{"type": "text", "text": "first"}]
    completion = client(server).chat.completions.create(model="gpt-test", messages=USER)
    assert completion.choices[0].message.content == "second"


def test_echo_reads_chat_completions_messages(server: ScriptedServer) -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "old"}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "tool output"},
    ]
    server.script(reply.echo(), reply.echo())
    api = client(server)
    completion = api.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "echo: b"
    completion = api.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "echo: hi"
    assert reply.last_user_text({"messages": messages}) == "b"


def test_a_cut_reply_stops_mid_chunk_without_done(server: ScriptedServer) -> None:
    server.script(reply.cut(3, reply.text("hello", chunks=5)))  # start, ping, block start
    _, body, _ = exchange(server, stream_body())
    frames, terminated = dechunk(body)
    assert not terminated and b"[DONE]" not in body
    assert frames[0].startswith(b"data: {") and frames[0].endswith(b"\n\n")  # the role chunk
    assert len(frames) == 2 and not frames[1].endswith(b"\n\n")  # half of the first delta
    server.script(reply.cut(3, reply.text("hello", chunks=5)))
    with pytest.raises(openai.APIError):  # as the SDK sees it: a request that failed
        chunks_of(server)


def test_an_in_stream_error_and_malformed_data(server: ScriptedServer) -> None:
    server.script(reply.sse_error("overloaded_error", "Overloaded"), reply.malformed())
    _, body, _ = exchange(server, stream_body())
    frames, terminated = dechunk(body)
    assert terminated and json.loads(frames[-1][6:]) == {
        "error": {"message": "Overloaded", "type": "server_error", "param": None,
                  "code": "overloaded"}
    }
    _, body, _ = exchange(server, stream_body())
    frames, _ = dechunk(body)
    assert frames[-1] == b'data: {"type": "content_block_start", "index": 0,\n\n'


def test_a_slow_reply_waits_between_chunks(server: ScriptedServer) -> None:
    server.script(reply.slow("abcd", 0.05, chunks=4))
    started = time.monotonic()
    assert len(chunks_of(server)) == 6
    assert time.monotonic() - started >= 0.25


# The raw scenarios: bytes exactly as given.

def test_raw_frames_are_sent_as_given(server: ScriptedServer) -> None:
    chunk = {"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    frames: list[Any] = [
        ": OPENROUTER PROCESSING\n\n", chunk, "data: {\"a\":\r\ndata: 1}\r\n\r\n", b"\xff", "[DONE]"
    ]
    server.script(reply.openai_raw(frames, headers={"x-quirk": "1"}))
    head, body, _ = exchange(server, stream_body())
    assert b"x-quirk: 1" in head and b"content-type: text/event-stream" in head
    sent, terminated = dechunk(body)
    assert terminated
    assert sent == [
        b": OPENROUTER PROCESSING\n\n",
        b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
        b'data: {"a":\r\ndata: 1}\r\n\r\n',
        b"\xff",
        b"data: [DONE]\n\n",
    ]


def test_raw_byte_by_byte_writes_one_byte_per_chunk(server: ScriptedServer) -> None:
    frames: list[Any] = [{"choices": [{"index": 0, "delta": {"content": "é"}}]}, "[DONE]"]
    server.script(reply.openai_raw(frames, byte_by_byte=True))
    _, body, _ = exchange(server, stream_body())
    sent, terminated = dechunk(body)
    assert terminated and {len(c) for c in sent} == {1}
    assert b"".join(sent) == (
        'data: {"choices":[{"index":0,"delta":{"content":"é"}}]}\n\ndata: [DONE]\n\n'.encode()
    )


def test_raw_split_at_gives_the_write_boundaries(server: ScriptedServer) -> None:
    server.script(reply.openai_raw(["data: [DONE]\n\n"], split_at=[3, 8, 99]))
    _, body, _ = exchange(server, stream_body())
    assert dechunk(body) == ([b"dat", b"a: [D", b"ONE]\n\n"], True)


def test_raw_close_after_ends_without_the_terminating_chunk(server: ScriptedServer) -> None:
    server.script(reply.openai_raw([{"choices": []}], close_after=True))
    _, body, _ = exchange(server, stream_body())
    assert dechunk(body) == ([b'data: {"choices":[]}\n\n'], False)


def test_raw_stall_after_done_holds_the_connection(server: ScriptedServer) -> None:
    server.script(reply.openai_raw(["[DONE]"], stall_after_done=0.3))
    _, body, waited = exchange(server, stream_body())
    assert dechunk(body) == ([b"data: [DONE]\n\n"], True)
    assert waited >= 0.25


def test_raw_json_answer_to_a_stream_and_raw_error_bodies(server: ScriptedServer) -> None:
    completion = {"object": "chat.completion", "choices": []}
    server.script(
        reply.openai_raw([completion], content_type="application/json"),
        reply.openai_raw([{"error": "a string"}], status=400),
        reply.openai_raw(["<html>502 Bad Gateway</html>"], status=502, content_type="text/html"),
    )
    head, body, _ = exchange(server, stream_body())
    assert b"content-type: application/json" in head and b"transfer-encoding" not in head
    assert json.loads(body) == completion
    head, body, _ = exchange(server, stream_body())
    assert head.startswith(b"HTTP/1.1 400") and json.loads(body) == {"error": "a string"}
    head, body, _ = exchange(server, stream_body())
    assert head.startswith(b"HTTP/1.1 502") and b"content-type: text/html" in head
    assert body == b"<html>502 Bad Gateway</html>"


def test_raw_error_bodies_reach_the_sdk(server: ScriptedServer) -> None:
    body = {"object": "error", "message": "bad model", "code": 400}
    server.script(reply.openai_raw([body], status=400))
    with pytest.raises(openai.BadRequestError) as caught:
        chunks_of(server)
    assert caught.value.body == body


def test_raw_delay_sleeps_between_writes(server: ScriptedServer) -> None:
    server.script(reply.openai_raw(["a", "b", "c"], delay=0.1, content_type="text/plain"))
    started = time.monotonic()
    _, body, _ = exchange(server, stream_body())
    assert body == b"abc" and time.monotonic() - started >= 0.18


def test_raw_replies_belong_to_the_chat_route(server: ScriptedServer) -> None:
    server.script(reply.openai_raw(["[DONE]"]), reply.dynamic(lambda body: reply.openai_raw([])))
    head, body, _ = exchange(server, stream_body(max_tokens=5), "/v1/messages")
    assert head.startswith(b"HTTP/1.1 400") and b"openai_raw" in body
    head, body, _ = exchange(server, stream_body())
    assert dechunk(body) == ([], True)  # a dynamic reply may choose one too

    async def in_process() -> None:
        from wisp.models.base import ModelRequest

        model = ScriptedModel(reply.openai_raw(["[DONE]"]))
        request = ModelRequest("m", [{"role": "user", "content": "hi"}], 5)
        async with model.stream(request):
            pass

    with pytest.raises(ModelAPIError, match="openai_raw"):
        asyncio.run(in_process())
