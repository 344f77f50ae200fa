"""wisp.serve.http and wisp.serve.auth over real sockets: httpx2 (what the anthropic SDK
uses), the SDK itself, and raw sockets for what well-behaved clients never send."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tests.waits import until
from wisp.errors import UsageError
from wisp.serve.auth import ANONYMOUS, ApiKeys, is_loopback, owner_for, refuse_open
from wisp.serve.http import (
    EventStream,
    HttpError,
    Limits,
    Request,
    Response,
    Router,
    Server,
    SseWriter,
    format_event,
)

JSON = dict[str, Any]


class Live:
    """A Server running on its own event loop in a daemon thread."""

    def __init__(self, server: Server, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.loop = loop

    @property
    def url(self) -> str:
        return self.server.url

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def tasks(self) -> int:
        async def count() -> int:
            return len(asyncio.all_tasks()) - 1  # not this one

        return int(self.call(count()))


@contextlib.contextmanager
def serving(
    router: Router, auth: ApiKeys | None = None, limits: Limits | None = None
) -> Iterator[Live]:
    loop = asyncio.new_event_loop()
    server = Server(router, "127.0.0.1", 0, auth, limits=limits)
    loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    live = Live(server, loop)
    try:
        yield live
    finally:
        live.call(server.close(1.0))
        leaked = live.tasks()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    assert leaked == 0, f"{leaked} tasks left after close"


def route(method: str, pattern: str, handler: Callable[[Request], Awaitable[Any]]) -> Router:
    router = Router()
    router.add(method, pattern, handler)
    return router


async def echo(request: Request) -> Response:
    return Response(
        200,
        {
            "method": request.method,
            "path": request.path,
            "params": request.params,
            "query": request.query,
            "owner": request.owner,
            "client_port": request.client[1] if request.client else None,
            "body": request.body.decode(),
            "ua": request.headers.get("user-agent"),
        },
    )


def raw(port: int, data: bytes, *, read_timeout: float = 3.0) -> bytes:
    """Sends `data` on a fresh socket and reads until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as sock:
        sock.sendall(data)
        chunks = []
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


def assert_error_shape(resp: httpx2.Response, status: int, type_: str) -> JSON:
    assert resp.status_code == status
    assert resp.headers["content-type"] == "application/json"
    body: JSON = resp.json()
    assert body == {
        "type": "error",
        "error": {"type": type_, "message": body["error"]["message"]},
        "request_id": resp.headers["request-id"],
    }
    assert body["request_id"].startswith("req_")
    return body


# Routing and parsing ---------------------------------------------------------------------


def test_routes_params_query_and_headers() -> None:
    router = Router()
    router.add("GET", "/v1/sessions/{session_id}/events", echo)
    router.add("POST", "/v1/sessions/{session_id}/events", echo)
    with serving(router) as live, httpx2.Client(base_url=live.url) as client:
        resp = client.get(
            "/v1/sessions/sess%2F1%20x/events",
            params=[("types", "a"), ("types", "b"), ("created_at[gt]", "2026-01-01"),
                    ("limit", ""), ("q", "a b&c")],
            headers={"User-Agent": "Tester/1"},
        )
        assert resp.status_code == 200
        assert resp.headers["request-id"].startswith("req_")
        body = resp.json()
        assert body["method"] == "GET"
        assert body["path"] == "/v1/sessions/sess/1 x/events"
        assert body["params"] == {"session_id": "sess/1 x"}
        assert body["query"] == {
            "types": ["a", "b"],
            "created_at[gt]": ["2026-01-01"],
            "limit": [""],
            "q": ["a b&c"],
        }
        assert body["ua"] == "Tester/1"  # header names are lower-cased
        assert body["client_port"] > 0

        posted = client.post("/v1/sessions/s1/events", json={"events": []})
        assert posted.json()["body"] == '{"events":[]}'
        assert posted.json()["query"] == {}


def test_literal_segments_win_over_params() -> None:
    async def literal(request: Request) -> Response:
        return Response(200, {"route": "stream"})

    async def param(request: Request) -> Response:
        return Response(200, {"route": "event", **request.params})

    router = Router()
    router.add("GET", "/v1/s/{sid}/events/{event_id}", param)
    router.add("GET", "/v1/s/{sid}/events/stream", literal)
    with serving(router) as live, httpx2.Client(base_url=live.url) as client:
        assert client.get("/v1/s/a/events/stream").json() == {"route": "stream"}
        assert client.get("/v1/s/a/events/e1").json() == {"route": "event", "sid": "a",
                                                           "event_id": "e1"}
        assert_error_shape(client.get("/v1/s//events/e1"), 404, "not_found_error")


def test_unknown_path_is_404_and_wrong_method_405() -> None:
    router = Router()
    router.add("GET", "/v1/agents", echo)
    router.add("POST", "/v1/agents", echo)
    router.add("GET", "/v1/agents/{agent_id}", echo)
    with serving(router) as live, httpx2.Client(base_url=live.url) as client:
        assert_error_shape(client.get("/v1/nothing"), 404, "not_found_error")
        assert_error_shape(client.get("/v1/agents/"), 404, "not_found_error")
        resp = client.delete("/v1/agents")
        assert_error_shape(resp, 405, "invalid_request_error")
        assert resp.headers["allow"] == "GET, POST"
        assert client.get("/v1/agents").status_code == 200  # the connection survives


def test_router_rejects_bad_patterns() -> None:
    router = Router()
    for bad in ("v1/x", "/v1/{a}/{a}", "/v1/x{a}", "/v1/{1a}"):
        with pytest.raises(ValueError):
            router.add("GET", bad, echo)


def test_bad_json_is_400() -> None:
    async def create(request: Request) -> Response:
        return Response(200, {"got": request.json()})

    with serving(route("POST", "/v1/agents", create)) as live, \
            httpx2.Client(base_url=live.url) as client:
        assert client.post("/v1/agents", json={"a": [1]}).json() == {"got": {"a": [1]}}
        body = assert_error_shape(client.post("/v1/agents", content=b"{nope"), 400,
                                  "invalid_request_error")
        assert "not valid JSON" in body["error"]["message"]
        body = assert_error_shape(client.post("/v1/agents"), 400, "invalid_request_error")
        assert "empty" in body["error"]["message"]


def test_handler_errors() -> None:
    async def fails(request: Request) -> Any:
        kind = request.query.get("kind")
        if kind == ["http"]:
            raise HttpError(409, "invalid_request_error", "busy", headers={"retry-after": "1"})
        if kind == ["unencodable"]:
            return Response(200, {"when": object()})
        if kind == ["not-a-response"]:
            return {"plain": "dict"}
        if kind == ["bad-header"]:
            return Response(200, {}, {"x-a": "1\r\nset-cookie: a=b"})
        raise RuntimeError("boom: secret detail")

    with serving(route("GET", "/v1/x", fails)) as live, \
            httpx2.Client(base_url=live.url) as client:
        resp = client.get("/v1/x", params={"kind": "http"})
        body = assert_error_shape(resp, 409, "invalid_request_error")
        assert body["error"]["message"] == "busy"
        assert resp.headers["retry-after"] == "1"
        body = assert_error_shape(client.get("/v1/x"), 500, "api_error")
        assert "secret" not in json.dumps(body)
        for kind in ("unencodable", "not-a-response", "bad-header"):
            assert_error_shape(client.get("/v1/x", params={"kind": kind}), 500, "api_error")
        assert client.get("/v1/x", params={"kind": "http"}).status_code == 409  # still serving


def test_unexpected_exception_traceback_goes_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    async def fails(request: Request) -> Response:
        raise KeyError("the-missing-key")

    with serving(route("GET", "/v1/x", fails)) as live:
        resp = httpx2.get(live.url + "/v1/x")
    assert resp.status_code == 500
    err = capfd.readouterr().err
    assert "Traceback" in err and "the-missing-key" in err
    assert resp.headers["request-id"] in err


# Limits ----------------------------------------------------------------------------------


def test_body_too_large_is_413() -> None:
    limits = Limits(max_body_bytes=1000, linger_s=1.0)
    with serving(route("POST", "/v1/x", echo), limits=limits) as live, \
            httpx2.Client(base_url=live.url) as client:
        assert client.post("/v1/x", content=b"a" * 1000).status_code == 200
        body = assert_error_shape(client.post("/v1/x", content=b"a" * 200_000), 413,
                                  "request_too_large")
        assert "1000" in body["error"]["message"]
        assert client.post("/v1/x", content=b"ok").status_code == 200  # a new connection

        # Chunked bodies are counted as they come.
        chunked = (b"POST /v1/x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
                   + b"400\r\n" + b"b" * 1024 + b"\r\n0\r\n\r\n")
        assert raw(live.server.port, chunked).startswith(b"HTTP/1.1 413 ")


def test_expect_100_continue() -> None:
    limits = Limits(max_body_bytes=1000)
    with serving(route("POST", "/v1/x", echo), limits=limits) as live:
        port = live.server.port
        # Too large: refused before the client sends the body (no 100).
        out = raw(port, b"POST /v1/x HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\n"
                        b"content-length: 5000\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in out
        # Within limits: 100 first, then the answer once the body arrives.
        with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
            sock.sendall(b"POST /v1/x HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\n"
                         b"content-length: 5\r\nconnection: close\r\n\r\n")
            assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
            sock.sendall(b"hello")
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 ") and b'"body":"hello"' in answer


def test_chunked_request_body() -> None:
    with serving(route("POST", "/v1/x", echo)) as live:
        out = raw(live.server.port,
                  b"POST /v1/x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n"
                  b"connection: close\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 ") and b'"body":"hello world"' in out


def test_headers_too_large_and_malformed_requests() -> None:
    limits = Limits(max_header_bytes=4096)
    with serving(route("GET", "/v1/x", echo), limits=limits) as live:
        port = live.server.port
        big = b"GET /v1/x HTTP/1.1\r\nx-big: " + b"a" * 8000 + b"\r\n\r\n"
        assert raw(port, big).startswith(b"HTTP/1.1 431 ")
        assert raw(port, b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert raw(port, b"GET /v1/x HTTP/2.0\r\n\r\n").startswith(b"HTTP/1.1 505 ")
        assert raw(port, b"GET /v1/x HTTP/1.1\r\n folded: x\r\n\r\n").startswith(
            b"HTTP/1.1 400 ")
        both = b"POST /v1/x HTTP/1.1\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n"
        assert raw(port, both).startswith(b"HTTP/1.1 400 ")
        assert raw(port, b"POST /v1/x HTTP/1.1\r\ncontent-length: +3\r\n\r\nabc").startswith(
            b"HTTP/1.1 400 ")
        # Blank lines before a request are skipped.
        out = raw(port, b"\r\n\r\nGET /v1/x HTTP/1.1\r\nconnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 200 ")


def test_slow_headers_get_408_and_idle_connections_close() -> None:
    limits = Limits(header_timeout_s=0.2, idle_timeout_s=0.3, body_timeout_s=0.2)
    with serving(route("POST", "/v1/x", echo), limits=limits) as live:
        port = live.server.port
        start = time.monotonic()
        assert raw(port, b"POST /v1/x HTTP/1.1\r\nhost").startswith(b"HTTP/1.1 408 ")
        assert raw(port, b"POST /v1/x HTTP/1.1\r\ncontent-length: 10\r\n\r\nabc").startswith(
            b"HTTP/1.1 408 ")
        assert raw(port, b"") == b""  # idle: closed without a word
        # 0.7 s of configured limits; under the shortest default (10 s), so these limits
        # did the cutting, with room for a loaded 2-core machine (it was 2.5 s).
        assert time.monotonic() - start < 8


# Auth ------------------------------------------------------------------------------------


def test_api_keys_x_api_key_and_bearer() -> None:
    keys = ApiKeys.from_env({"WISP_SERVE_API_KEYS": " k-one , ,k-two,"})
    assert len(keys) == 2
    with serving(route("GET", "/v1/x", echo), auth=keys) as live, \
            httpx2.Client(base_url=live.url) as client:
        one = client.get("/v1/x", headers={"x-api-key": "k-one"}).json()["owner"]
        two = client.get("/v1/x", headers={"Authorization": "Bearer k-two"}).json()["owner"]
        assert one == owner_for("k-one") and two == owner_for("k-two") and one != two
        assert "k-one" not in one and len(one) == 24
        assert client.get("/v1/x", headers={"authorization": "bearer k-one"}).json()[
            "owner"] == one

        wrong = client.get("/v1/x", headers={"x-api-key": "k-three"})
        assert wrong.json() == {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            "request_id": wrong.headers["request-id"],
        }
        assert wrong.status_code == 401
        missing = client.get("/v1/x")
        assert_error_shape(missing, 401, "authentication_error")
        assert missing.json()["error"]["message"] == "x-api-key header is required"
        assert_error_shape(client.get("/v1/x", headers={"authorization": "Basic k-one"}), 401,
                           "authentication_error")
        # x-api-key decides when both are sent; auth comes before routing.
        assert client.get("/v1/x", headers={"x-api-key": "bad", "authorization": "Bearer k-one"}
                          ).status_code == 401
        assert_error_shape(client.get("/v1/secret-path"), 401, "authentication_error")
        assert client.get("/v1/secret-path", headers={"x-api-key": "k-one"}).status_code == 404


def test_no_keys_on_loopback_is_one_anonymous_owner() -> None:
    with serving(route("GET", "/v1/x", echo), auth=ApiKeys.from_env({})) as live, \
            httpx2.Client(base_url=live.url) as client:
        assert client.get("/v1/x").json()["owner"] == ANONYMOUS
        assert client.get("/v1/x", headers={"x-api-key": "anything"}).json()["owner"] == ANONYMOUS


def test_refuse_open_without_keys() -> None:
    none = ApiKeys()
    for host in ("0.0.0.0", "::", "", "192.168.1.4", "example.com"):
        with pytest.raises(UsageError, match=r"refusing to listen on .* without WISP_SERVE_API"):
            refuse_open(host, none)
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host)
        refuse_open(host, none)
    refuse_open("0.0.0.0", ApiKeys(["k"]))
    with pytest.raises(UsageError, match=r"refusing to listen on 0\.0\.0\.0"):
        asyncio.run(Server(Router(), "0.0.0.0", 0, none).start())


def test_anthropic_sdk_sees_authentication_and_not_found_errors() -> None:
    async def agent(request: Request) -> Response:
        raise HttpError(404, "not_found_error", f"agent {request.params['agent_id']} not found")

    keys = ApiKeys(["sk-good"])
    with serving(route("GET", "/v1/agents/{agent_id}", agent), auth=keys) as live:
        bad = anthropic.Anthropic(base_url=live.url, api_key="sk-bad", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError) as auth_err:
            bad.beta.agents.retrieve("agent_x")
        assert auth_err.value.type == "authentication_error"
        assert auth_err.value.request_id and auth_err.value.request_id.startswith("req_")

        good = anthropic.Anthropic(base_url=live.url, api_key="sk-good", max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as missing:
            good.beta.agents.retrieve("agent_x")
        assert missing.value.api_message == "agent agent_x not found"
        with pytest.raises(anthropic.NotFoundError):  # no route at all
            good.beta.environments.retrieve("env_x")


# Keep-alive ------------------------------------------------------------------------------


def test_keep_alive_reuses_one_connection() -> None:
    with serving(route("GET", "/v1/x", echo)) as live:
        with httpx2.Client(base_url=live.url) as client:
            ports = {client.get("/v1/x").json()["client_port"] for _ in range(20)}
        assert len(ports) == 1
        # Two requests on one raw socket, the second asking to close.
        out = raw(live.server.port,
                  b"GET /v1/x HTTP/1.1\r\nhost: x\r\n\r\n"
                  b"GET /v1/x?n=2 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        assert out.count(b"HTTP/1.1 200 OK") == 2
        assert b"connection: keep-alive" in out and out.rstrip().endswith(b'"ua":null}')
        assert b"connection: close" in out
        # HTTP/1.0 closes unless asked to keep alive.
        assert raw(live.server.port, b"GET /v1/x HTTP/1.0\r\n\r\n").count(b"HTTP/1.1 200") == 1


# SSE -------------------------------------------------------------------------------------


def events_route(count: int, ping_s: float | None = None, delay: float = 0.0) -> Router:
    async def stream(request: Request) -> EventStream:
        async def produce(out: SseWriter) -> None:
            for i in range(count):
                if delay:
                    await asyncio.sleep(delay)
                await out.send_json({"type": "session.status_running", "id": f"sevt_{i}",
                                     "n": i}, event="message", id=str(i + 1))

        return EventStream(produce, ping_s=ping_s)

    router = route("GET", "/v1/sessions/{session_id}/events/stream", stream)
    router.add("GET", "/v1/x", echo)
    return router


def test_sse_events_arrive_in_order_and_the_connection_is_reused() -> None:
    with serving(events_route(25)) as live, httpx2.Client(base_url=live.url) as client:
        with client.stream("GET", "/v1/sessions/s1/events/stream") as resp:
            assert resp.status_code == 200
            assert resp.headers["content-type"].startswith("text/event-stream")
            assert resp.headers["transfer-encoding"] == "chunked"
            assert resp.headers["request-id"].startswith("req_")
            events = list(httpx2.EventSource(resp))
            stream_port = resp.extensions["network_stream"].get_extra_info(
                "client_addr")[1]
        assert [e.id for e in events] == [str(i + 1) for i in range(25)]
        assert all(e.event == "message" for e in events)
        assert [json.loads(e.data)["n"] for e in events] == list(range(25))
        # The stream ended with its last chunk, so the same connection serves on.
        assert client.get("/v1/x").json()["client_port"] == stream_port


def test_sse_bytes_decode_with_a_standard_decoder() -> None:
    """Multi-line data, a comment between events and an id that carries over, read by the
    SSE decoder of httpx2 (the HTTP library the anthropic SDK is built on). The SDK's own
    reading of our streams is covered end to end by the session-stream tests below."""
    async def stream(request: Request) -> EventStream:
        async def produce(out: SseWriter) -> None:
            await out.send("line one\nline two\r\nline\u2028three", event="note", id="7")
            await out.comment("ping")
            await out.send('{"type":"x"}', event="message")

        return EventStream(produce)

    with serving(route("GET", "/s", stream)) as live, httpx2.Client(base_url=live.url) as client, \
            client.stream("GET", "/s") as resp:
        events = list(httpx2.EventSource(resp))
    # A comment dispatches nothing; the last id carries over, per the SSE spec.
    assert [(e.event, e.id, e.data) for e in events] == [
        ("note", "7", "line one\nline two\nline\u2028three"),
        ("message", "7", '{"type":"x"}'),
    ]


def test_anthropic_sdk_streams_session_events_to_the_end() -> None:
    async def stream(request: Request) -> EventStream:
        async def produce(out: SseWriter) -> None:
            await out.comment("ping")
            for i, kind in enumerate(("session.status_running", "session.status_idle")):
                await out.send_json({"type": kind, "id": f"sevt_{i}",
                                     "processed_at": "2026-01-01T00:00:00Z"},
                                    event="message", id=str(i + 1))

        return EventStream(produce)

    router = route("GET", "/v1/sessions/{session_id}/events/stream", stream)
    with serving(router) as live:
        client = anthropic.Anthropic(base_url=live.url, api_key="k", max_retries=0)
        got = [event.type for event in client.beta.sessions.events.stream("sess_1")]
    assert got == ["session.status_running", "session.status_idle"]


def test_sse_keepalive_comments() -> None:
    with serving(events_route(1, ping_s=0.05, delay=0.5)) as live, \
            httpx2.Client(base_url=live.url) as client, \
            client.stream("GET", "/v1/sessions/s/events/stream") as resp:
        body = b"".join(resp.iter_bytes())
    assert body.count(b": ping\n\n") >= 2
    assert body.endswith(b'data: {"type":"session.status_running","id":"sevt_0","n":0}\n\n')


def test_sse_producer_error_becomes_an_error_event() -> None:
    async def stream(request: Request) -> EventStream:
        async def produce(out: SseWriter) -> None:
            await out.send_json({"type": "session.status_running"}, event="message")
            raise HttpError(429, "rate_limit_error", "slow down")

        return EventStream(produce)

    with serving(route("GET", "/s", stream)) as live, httpx2.Client(base_url=live.url) as client, \
            client.stream("GET", "/s") as resp:
        events = list(httpx2.EventSource(resp))
    assert [e.event for e in events] == ["message", "error"]
    error = json.loads(events[1].data)
    assert error["type"] == "error"
    assert error["error"] == {"type": "rate_limit_error", "message": "slow down"}


def test_sse_client_disconnect_stops_the_producer() -> None:
    gone = threading.Event()
    closed = threading.Event()

    async def stream(request: Request) -> EventStream:
        async def produce(out: SseWriter) -> None:
            try:
                await out.send("first", event="message")
                await asyncio.Event().wait()  # an idle session: only the disconnect ends this
            finally:
                gone.set()

        return EventStream(produce, on_close=closed.set, ping_s=0)

    with serving(route("GET", "/s", stream)) as live:
        with httpx2.Client(base_url=live.url) as client, client.stream("GET", "/s") as resp:
            # Held in a name: a dropped iterator would close the response (and the socket).
            events = iter(httpx2.EventSource(resp))
            assert next(events).data == "first"
            time.sleep(0.05)
            assert live.server.connections == 1 and not gone.is_set()
        assert gone.wait(3) and closed.wait(3)
        deadline = time.monotonic() + 3
        while live.server.connections and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.server.connections == 0
        assert live.tasks() == 0  # no producer, watcher or connection task left


class _Crowd:
    """The handlers of the crowd test: event streams fed by hand (`subscribed` once 60
    listen), and a POST that answers only once all 200 are in at once."""

    def __init__(self) -> None:
        self.subscribers: list[asyncio.Queue[JSON | None]] = []
        self.subscribed = asyncio.Event()
        self.arrived = 0
        self.all_arrived = asyncio.Event()

    async def stream(self, request: Request) -> EventStream:
        queue: asyncio.Queue[JSON | None] = asyncio.Queue()
        self.subscribers.append(queue)
        if len(self.subscribers) == 60:
            self.subscribed.set()

        async def produce(out: SseWriter) -> None:
            while (event := await queue.get()) is not None:
                await out.send_json(event, event="message", id=str(event["seq"]))

        return EventStream(produce, on_close=lambda: self.subscribers.remove(queue))

    async def slow(self, request: Request) -> Response:
        self.arrived += 1
        if self.arrived == 200:
            self.all_arrived.set()
        await self.all_arrived.wait()
        return Response(200, {"ok": True})


def test_sixty_concurrent_sse_clients_and_two_hundred_requests() -> None:
    async def scenario() -> None:
        crowd = _Crowd()
        subscribers, subscribed = crowd.subscribers, crowd.subscribed
        router = route("GET", "/v1/sessions/{session_id}/events/stream", crowd.stream)
        router.add("POST", "/v1/sessions", crowd.slow)
        server = Server(router, "127.0.0.1", 0)
        await server.start()
        limits = httpx2.Limits(max_connections=300, max_keepalive_connections=300)
        async with httpx2.AsyncClient(base_url=server.url, limits=limits, timeout=10) as client:

            async def listen() -> list[int]:
                async with client.stream("GET", "/v1/sessions/s1/events/stream") as resp:
                    return [int(e.id) async for e in httpx2.EventSource(resp)]

            listeners = [asyncio.create_task(listen()) for _ in range(60)]
            await asyncio.wait_for(subscribed.wait(), 10)
            for seq in range(1, 21):
                for queue in subscribers:
                    queue.put_nowait({"type": "agent.message", "seq": seq})
            for queue in subscribers:
                queue.put_nowait(None)
            results = await asyncio.wait_for(asyncio.gather(*listeners), 10)
            assert all(ids == list(range(1, 21)) for ids in results)
            assert subscribers == []  # every on_close ran

            answers = await asyncio.wait_for(
                asyncio.gather(*(client.post("/v1/sessions", json={}) for _ in range(200))), 10)
            assert all(a.status_code == 200 for a in answers)
            assert server.connections >= 200
        await server.close(1.0)
        assert server.connections == 0

    asyncio.run(scenario())


# Close -----------------------------------------------------------------------------------


def test_graceful_close() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        stream_closed = asyncio.Event()
        # Each handler says when it runs: the drain must begin with all three in progress.
        slow_in, stuck_in, stream_in = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def slow(request: Request) -> Response:
            slow_in.set()
            await asyncio.sleep(0.2)  # a handler that takes a while (inside the drain)
            return Response(200, {"done": True})

        async def stuck(request: Request) -> Response:
            stuck_in.set()
            await release.wait()  # never set: cut at the end of the drain
            return Response(200, {})

        async def stream(request: Request) -> EventStream:
            async def produce(out: SseWriter) -> None:
                await out.send("hello", event="message")
                stream_in.set()
                await asyncio.Event().wait()

            return EventStream(produce, on_close=stream_closed.set)

        router = route("GET", "/slow", slow)
        router.add("GET", "/stuck", stuck)
        router.add("GET", "/stream", stream)
        router.add("GET", "/x", echo)
        server = Server(router, "127.0.0.1", 0)
        await server.start()
        idle = httpx2.AsyncClient(base_url=server.url, timeout=5)
        async with idle, httpx2.AsyncClient(base_url=server.url, timeout=5) as client:
            assert (await idle.get("/x")).status_code == 200  # leaves an idle connection
            slow_call = asyncio.create_task(client.get("/slow"))
            stuck_call = asyncio.create_task(client.get("/stuck"))

            async def listen() -> list[str]:
                async with client.stream("GET", "/stream") as resp:
                    return [e.data async for e in httpx2.EventSource(resp)]

            listener = asyncio.create_task(listen())
            await until(lambda: server.connections >= 4, "four connections")
            await asyncio.wait_for(asyncio.gather(
                slow_in.wait(), stuck_in.wait(), stream_in.wait()), 30)
            started = time.monotonic()
            await server.close(drain_s=0.6)
            took = time.monotonic() - started
            assert 0.5 < took < 3.0, took
            slow_resp = await slow_call
            assert slow_resp.json() == {"done": True}
            assert slow_resp.headers["connection"] == "close"
            assert await listener == ["hello"]  # ended cleanly, with the last chunk
            assert stream_closed.is_set()
            with pytest.raises(httpx2.HTTPError):
                await stuck_call
            with pytest.raises(httpx2.ConnectError):
                await idle.get("/x")
        assert server.connections == 0
        assert len(asyncio.all_tasks()) == 1

    asyncio.run(scenario())


# Units -----------------------------------------------------------------------------------


def test_format_event() -> None:
    assert format_event("a\nb", event="message", id="3") == (
        b"event: message\nid: 3\ndata: a\ndata: b\n\n")
    assert format_event("") == b"data: \n\n"
    assert format_event("x\u2028y") == "data: x\u2028y\n\n".encode()
    with pytest.raises(ValueError):
        format_event("x", event="bad\nname")
    with pytest.raises(ValueError):
        format_event("x", id="a\rb")


def test_response_rejects_header_injection() -> None:
    for name, value in (("x-a", "1\r\nset-cookie: a=b"), ("x-a\n", "1"), ("x-a", "é")):
        with pytest.raises(ValueError):
            Response(200, {}, {name: value})
