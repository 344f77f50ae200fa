"""The scripted server seen from the outside, mostly through the stdlib `http.client`."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest

from wisp.testing import RecordedRequest, Reply, ScriptedServer, reply

JSON = dict[str, Any]
BODY: JSON = {
    "model": "claude-x",
    "max_tokens": 5,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


def call(
    server: ScriptedServer, method: str = "POST", path: str = "/v1/messages", body: Any = BODY
) -> tuple[http.client.HTTPResponse, bytes]:
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request(
        method,
        path,
        body=payload if method != "HEAD" else None,
        headers={"Content-Type": "application/json", "X-Api-Key": "k"},
    )
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response, data


def sse(data: bytes) -> list[tuple[str, JSON]]:
    out = []
    for block in data.decode().split("\n\n"):
        if block:
            name, payload = block.split("\n")
            out.append((name.removeprefix("event: "), json.loads(payload.removeprefix("data: "))))
    return out


def test_a_text_reply_is_chunked_sse_like_the_real_api(server: ScriptedServer) -> None:
    server.script(reply.text("abcdef", chunks=2, usage={"output_tokens": 9, "input_tokens": 77}))
    response, data = call(server)
    assert response.status == 200
    assert response.getheader("transfer-encoding") == "chunked"
    assert str(response.getheader("content-type")).startswith("text/event-stream")
    assert str(response.getheader("request-id")).startswith("req_")
    events = sse(data)
    assert [name for name, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == payload["type"] for name, payload in events)
    message = events[0][1]["message"]
    assert message["id"].startswith("msg_") and message["model"] == "claude-x"
    assert message["usage"]["input_tokens"] == 77
    assert events[6][1]["usage"] == {"output_tokens": 9}
    assert [e[1]["delta"]["text"] for e in events[3:5]] == ["abc", "def"]


def test_usage_is_estimated_from_the_request_size(server: ScriptedServer) -> None:
    server.script(reply.text("x"))
    _, data = call(server)
    size = len(json.dumps(BODY).encode())
    assert sse(data)[0][1]["message"]["usage"]["input_tokens"] == size // 4


def test_requests_are_recorded_in_order(server: ScriptedServer) -> None:
    server.script(reply.text("one"), reply.text("two"))
    call(server, path="/v1/messages?beta=true")
    call(server, "HEAD", "/api/hello")
    recorded = server.wait_for_requests(2, timeout=5)
    assert recorded[0] == RecordedRequest(
        "POST", "/v1/messages?beta=true", recorded[0].headers, BODY
    )
    assert recorded[0].headers["x-api-key"] == "k"
    assert (recorded[1].method, recorded[1].path, recorded[1].body) == ("HEAD", "/api/hello", None)


def test_wait_for_requests_times_out(server: ScriptedServer) -> None:
    with pytest.raises(TimeoutError, match="expected 1 requests, got 0"):
        server.wait_for_requests(1, timeout=0.05)


def test_wait_for_requests_wakes_when_a_request_arrives(server: ScriptedServer) -> None:
    server.script(reply.text("x"))
    thread = threading.Thread(target=call, args=(server,))
    thread.start()
    assert len(server.wait_for_requests(1, timeout=5)) == 1
    thread.join()


def test_side_endpoints(server: ScriptedServer) -> None:
    response, data = call(server, path="/v1/messages/count_tokens?beta=true", body={"a": "b" * 40})
    assert json.loads(data) == {"input_tokens": len(json.dumps({"a": "b" * 40})) // 4}
    for path in ("/", "/api/hello"):
        response, data = call(server, "HEAD", path)
        assert (response.status, data) == (200, b"")
    response, data = call(server, "GET", "/v1/models")
    assert (response.status, json.loads(data)) == (200, {})
    assert server.requests[-1].method == "GET"


def test_system_role_messages_are_accepted(server: ScriptedServer) -> None:
    server.script(reply.echo())
    body = {
        **BODY,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<reminder>"},
                    {"type": "text", "text": "the prompt"},
                ],
            },
            {"role": "system", "content": [], "output_config": {"effort": "medium"}},
        ],
    }
    _, data = call(server, body=body)
    assert sse(data)[3][1]["delta"]["text"].startswith("echo: ")
    text = "".join(p["delta"]["text"] for n, p in sse(data) if n == "content_block_delta")
    assert text == "echo: the prompt"


def test_an_exhausted_script_is_a_400_unless_a_default_is_set() -> None:
    with ScriptedServer() as server:
        response, data = call(server)
        assert response.status == 400
        assert json.loads(data) == {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "wisp.testing: no scripted reply left",
            },
        }
    with ScriptedServer(reply.text("first"), default=reply.echo()) as server:
        texts = []
        for _ in range(3):
            _, data = call(server)
            texts.append(
                "".join(p["delta"]["text"] for n, p in sse(data) if n == "content_block_delta")
            )
        assert texts == ["first", "echo: hi", "echo: hi"]


def test_error_replies_carry_status_type_and_retry_after(server: ScriptedServer) -> None:
    server.script(
        reply.error(429, "slow down", retry_after=1.5), reply.error(418, "teapot", error_type="x")
    )
    response, data = call(server)
    assert (response.status, response.getheader("retry-after")) == (429, "1.5")
    assert json.loads(data)["error"] == {"type": "rate_limit_error", "message": "slow down"}
    response, data = call(server)
    assert (response.status, json.loads(data)["error"]["type"]) == (418, "x")


def test_dynamic_replies_see_the_request_body(server: ScriptedServer) -> None:
    seen: list[JSON] = []

    def choose(body: JSON) -> Reply:
        seen.append(body)
        return reply.text(f"{len(body['messages'])} messages")

    server.script(reply.dynamic(choose), reply.dynamic(lambda body: 1 / 0))  # type: ignore[arg-type,return-value]
    _, data = call(server)
    assert seen == [BODY]
    response, data = call(server)
    assert response.status == 400 and b"ZeroDivisionError" in data


def test_a_request_without_stream_gets_the_whole_message(server: ScriptedServer) -> None:
    server.script(reply.tool_use("Bash", {"command": "ls"}, id="toolu_1", text="hi"))
    response, data = call(server, body={**BODY, "stream": False})
    assert response.getheader("content-type") == "application/json"
    message = json.loads(data)
    assert message["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
    ]
    assert message["stop_reason"] == "tool_use"


def test_a_body_that_is_not_json_is_a_400(server: ScriptedServer) -> None:
    server.script(reply.text("kept", chunks=1))
    response, _ = call(server, body=b"{nope")
    assert response.status == 400
    assert server.requests[0].body is None
    _, data = call(server)
    assert b"kept" in data  # the scripted reply was not used up


def test_a_cut_reply_stops_mid_chunk_without_a_final_chunk(server: ScriptedServer) -> None:
    server.script(reply.cut(after_events=2, base=reply.text("hello")))
    host, port = server.url.removeprefix("http://").split(":")
    payload = json.dumps(BODY).encode()
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
            % (len(payload), payload)
        )
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    body = raw.split(b"\r\n\r\n", 1)[1]
    assert body.count(b"event: ") == 3  # two whole events, then half of the third
    assert b"event: content_block_start" in body and not body.endswith(b"0\r\n\r\n")
    last_size, last_data = body.rsplit(b'event: ping\ndata: {"type": "ping"}\n\n\r\n', 1)[1].split(
        b"\r\n", 1
    )
    assert len(last_data) < int(last_size, 16)


def test_malformed_and_sse_error_replies(server: ScriptedServer) -> None:
    server.script(reply.malformed(), reply.sse_error())
    _, data = call(server)
    assert data.decode().split("\n\n")[1].startswith("event: content_block_start\ndata: {")
    with pytest.raises(json.JSONDecodeError):
        sse(data)
    _, data = call(server)
    assert sse(data)[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )


def test_reply_builders() -> None:
    events = (
        reply.message(
            [
                {"type": "tool_use", "name": "T", "input": {}},
                {"type": "redacted_thinking", "data": "abc"},
            ],
            stop_reason="pause_turn",
        )
        .render(BODY, 100)
        .events
    )
    payloads = [json.loads(data) for _, data in events]
    assert payloads[2]["content_block"]["id"].startswith("toolu_")
    assert {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "redacted_thinking", "data": "abc"},
    } in payloads
    assert payloads[-2]["delta"]["stop_reason"] == "pause_turn"
    max_tokens = reply.max_tokens("cut").render(BODY, 0).events
    assert json.loads(max_tokens[-2][1])["delta"]["stop_reason"] == "max_tokens"
    slow = reply.slow("a b c", 0.25).render(BODY, 0)
    assert slow.delay == 0.25


def test_close_wakes_slow_streams_and_idle_connections() -> None:
    server = ScriptedServer(reply.slow("very slow", delay_per_event=30))
    host, port = server.url.removeprefix("http://").split(":")
    payload = json.dumps(BODY).encode()
    idle = socket.create_connection((host, int(port)))  # a keep-alive connection, never used
    streaming = socket.create_connection((host, int(port)))
    streaming.sendall(
        b"POST /v1/messages HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(payload), payload)
    )
    server.wait_for_requests(1)
    started = time.monotonic()
    server.close()
    server.close()  # idempotent
    assert time.monotonic() - started < 5.0  # not the stream's end nor a socket timeout
    idle.close()
    streaming.close()
