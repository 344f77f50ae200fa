"""Keep-alive connection reuse, over real sockets: the scripted server for the model
provider, and small raw asyncio servers for what a well-behaved server never does."""

from __future__ import annotations

import asyncio
import gc
import shutil
import ssl
import subprocess
import time
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.models.test_anthropic_model import collect, make_request, model_for
from wisp.errors import RetryableAPIError, StreamCutError
from wisp.models import http
from wisp.models.anthropic import AnthropicConfig, AnthropicModel
from wisp.models.pool import ConnectionPool
from wisp.testing import ScriptedServer, reply

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def connections(server: ScriptedServer) -> list[int]:
    return [r.connection for r in server.requests]


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Polls a condition while letting the loop run (its sockets see their EOFs)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


# The provider against the scripted server ------------------------------------------------


def test_sequential_requests_reuse_one_connection(server: ScriptedServer) -> None:
    server.script(reply.text("one"), reply.tool_use("Bash", {"command": "ls"}), reply.text("3"))
    model = model_for(server)

    async def scenario() -> None:
        for _ in range(3):
            await collect(model, make_request())
            assert model.pool.idle_count() == 1

    asyncio.run(scenario())
    assert connections(server) == [1, 1, 1]
    assert server.connections_accepted == 1
    assert len({r.client_port for r in server.requests}) == 1
    assert server.requests[0].headers["connection"] == "keep-alive"
    assert server.requests[0].headers["content-length"].isdigit()


def test_loop_shutdown_closes_idle_connections_quietly(server: ScriptedServer) -> None:
    server.script(reply.text("one"), reply.text("two"))
    model = model_for(server)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(collect(model, make_request()))
        assert model.pool.idle_count() == 0  # closed as asyncio.run ended, not left to GC
        asyncio.run(collect(model, make_request()))  # a new loop: a new connection
        del model
        gc.collect()
    assert connections(server) == [1, 2]
    assert [str(w.message) for w in caught] == []


def test_model_aclose_closes_idle_connections(server: ScriptedServer) -> None:
    server.script(reply.text("one"))
    model = model_for(server)

    async def scenario() -> int:
        await collect(model, make_request())
        before = model.pool.idle_count()
        await model.aclose()
        return before

    assert asyncio.run(scenario()) == 1
    assert model.pool.idle_count() == 0


def test_a_cut_stream_is_not_reused(server: ScriptedServer) -> None:
    server.script(reply.cut(after_events=3), reply.text("fine"))
    model = model_for(server)

    async def scenario() -> None:
        with pytest.raises(StreamCutError):
            await collect(model, make_request())
        assert model.pool.idle_count() == 0
        await collect(model, make_request())

    asyncio.run(scenario())
    assert connections(server) == [1, 2]


def test_a_missing_final_chunk_after_message_stop_is_not_reused(server: ScriptedServer) -> None:
    server.script(reply.cut(after_events=100, base=reply.text("whole")), reply.text("next"))
    model = model_for(server)

    async def scenario() -> None:
        _, message, _ = await collect(model, make_request())
        assert message["content"][0]["text"] == "whole"
        await collect(model, make_request())

    asyncio.run(scenario())
    assert connections(server) == [1, 2]


def test_an_error_status_read_to_the_end_is_reused(server: ScriptedServer) -> None:
    server.script(reply.error(529, "Overloaded"), reply.error(400, "bad"), reply.text("ok"))
    model = model_for(server)

    async def scenario() -> None:
        with pytest.raises(RetryableAPIError) as caught:
            await collect(model, make_request())
        assert caught.value.status == 529
        with pytest.raises(Exception, match="bad"):
            await collect(model, make_request())
        await collect(model, make_request())

    asyncio.run(scenario())
    assert connections(server) == [1, 1, 1]


def test_closing_a_stream_midway_does_not_pool_its_socket(server: ScriptedServer) -> None:
    server.script(reply.slow("a reply that takes seconds", delay_per_event=0.5), reply.text("x"))
    model = model_for(server)

    async def scenario() -> None:
        async with model.stream(make_request()) as stream:
            async for event in stream:
                assert event["type"] == "message_start"
                break
        assert model.pool.idle_count() == 0
        await collect(model, make_request())

    asyncio.run(scenario())
    assert connections(server) == [1, 2]


@pytest.mark.parametrize("seen_closed", [False, True], ids=["as-we-send", "while-idle"])
def test_a_connection_the_server_closed_is_replaced_silently(
    server: ScriptedServer, seen_closed: bool
) -> None:
    server.script(reply.text("one"), reply.text("two"))
    model = model_for(server)

    async def scenario() -> str:
        await collect(model, make_request())
        server.drop_connections()
        if seen_closed:  # the client notices the EOF before it sends
            await wait_until(lambda: model.pool.idle_count() == 0)
        _, message, _ = await collect(model, make_request())  # no error, no API retry
        return str(message["content"][0]["text"])

    assert asyncio.run(scenario()) == "two"
    assert connections(server) == [1, 2]


def test_concurrent_streams_use_separate_connections(server: ScriptedServer) -> None:
    server.script(*(reply.text(f"r{i}") for i in range(5)))
    model = AnthropicModel(AnthropicConfig(base_url=server.url, api_key="k"))
    model.pool.max_per_key = 2

    async def scenario() -> None:
        await asyncio.gather(*(collect(model, make_request()) for _ in range(3)))
        assert model.pool.idle_count() == 2  # the third is closed, not kept
        await asyncio.gather(*(collect(model, make_request()) for _ in range(2)))

    asyncio.run(scenario())
    assert sorted(connections(server)[:3]) == [1, 2, 3]
    assert set(connections(server)[3:]) <= {1, 2, 3} and server.connections_accepted == 3


# The client against raw servers --------------------------------------------------------


@dataclass
class RawServer:
    """Answers request number `n` (from 1) on connection `c` (from 1) with `answer(c, n)`;
    None closes the connection without answering; `hang_up(c, n)` closes it after the answer."""

    answer: Callable[[int, int], bytes | None]
    hang_up: Callable[[int, int], bool] = lambda c, n: False
    url: str = ""
    seen: list[tuple[int, int]] = field(default_factory=list)  # (connection, request)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = len({c for c, _ in self.seen}) + 1
        try:
            for nth in range(1, 100):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":")[1]) for line in head.split(b"\r\n")
                     if line.lower().startswith(b"content-length:")),
                    0,
                )
                await reader.readexactly(length)
                self.seen.append((number, nth))
                data = self.answer(number, nth)
                if data is None:
                    return
                writer.write(data)
                await writer.drain()
                if self.hang_up(number, nth):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def raw_server(
    answer: Callable[[int, int], bytes | None],
    ssl_context: ssl.SSLContext | None = None,
    hang_up: Callable[[int, int], bool] = lambda c, n: False,
) -> AsyncIterator[RawServer]:
    raw = RawServer(answer, hang_up)
    server = await asyncio.start_server(raw.serve, "127.0.0.1", 0, ssl=ssl_context)
    port = server.sockets[0].getsockname()[1]
    raw.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}/"
    try:
        yield raw
    finally:
        server.close()


async def get(url: str, pool: ConnectionPool) -> bytes:
    response = await http.request("POST", url, {}, b"{}", read_timeout=5, pool=pool)
    try:
        return await response.read()
    finally:
        await response.aclose()


def test_a_request_unanswered_on_a_reused_connection_is_sent_again() -> None:
    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool()
        # The server takes the second request on connection 1, then hangs up unanswered:
        # what a server closing an idle connection looks like from the client.
        async with raw_server(lambda c, n: None if (c, n) == (1, 2) else OK) as raw:
            assert await get(raw.url, pool) == b"ok"
            assert await get(raw.url, pool) == b"ok"
            assert await get(raw.url, pool) == b"ok"
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (1, 2), (2, 1), (2, 2)]


def test_no_resend_once_response_bytes_arrived() -> None:
    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool()
        partial = b"HTTP/1.1 50"  # then the server hangs up
        async with raw_server(
            lambda c, n: OK if n == 1 else partial, hang_up=lambda c, n: n == 2
        ) as raw:
            await get(raw.url, pool)
            with pytest.raises(RetryableAPIError, match="connection closed by the server"):
                await get(raw.url, pool)
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (1, 2)]


def test_a_fresh_connection_unanswered_is_an_api_error_not_a_resend() -> None:
    async def scenario() -> list[tuple[int, int]]:
        async with raw_server(lambda c, n: None) as raw:
            with pytest.raises(RetryableAPIError, match="connection closed by the server"):
                await get(raw.url, ConnectionPool())
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1)]


@pytest.mark.parametrize(
    ("response", "hang_up"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n", True),
    ],
    ids=["connection-close", "http-1.0", "final-crlf-missing"],
)
def test_responses_that_end_the_connection_are_not_pooled(response: bytes, hang_up: bool) -> None:
    # The server keeps the connection open (unless it must, to end the body): a client
    # that pooled it anyway would send the second request on it.
    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool()
        async with raw_server(
            lambda c, n: response if c == 1 else OK, hang_up=lambda c, n: hang_up
        ) as raw:
            assert await get(raw.url, pool) == b"ok"
            assert pool.idle_count() == 0
            assert await get(raw.url, pool) == b"ok"
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (2, 1)]


def test_http_1_0_keep_alive_and_chunked_bodies_are_pooled() -> None:
    answers = [
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        OK,
    ]

    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool()
        async with raw_server(lambda c, n: answers[n - 1]) as raw:
            for expected in (b"ok", b"ok", b"", b"ok"):
                assert await get(raw.url, pool) == expected
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (1, 2), (1, 3), (1, 4)]


def test_idle_connections_expire() -> None:
    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool(max_idle=0.05)
        async with raw_server(lambda c, n: OK) as raw:
            await get(raw.url, pool)
            assert pool.idle_count() == 1
            await wait_until(lambda: pool.idle_count() == 0)  # the janitor closed it
            await get(raw.url, pool)
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (2, 1)]


def test_without_a_pool_each_request_has_its_own_connection() -> None:
    async def scenario() -> list[tuple[int, int]]:
        async with raw_server(lambda c, n: OK) as raw:
            for _ in range(2):
                response = await http.request("GET", raw.url, {}, read_timeout=5)
                assert await response.read() == b"ok"
                await response.aclose()
            return raw.seen

    assert asyncio.run(scenario()) == [(1, 1), (2, 1)]


@pytest.fixture
def tls_contexts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) contexts for 127.0.0.1 with a fresh self-signed certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl CLI to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))
    from wisp.models import pool

    monkeypatch.setattr(pool, "_SSL_CONTEXT", client_context)
    return server_context, client_context


def test_a_tls_connection_is_reused(tls_contexts: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    server_context, _ = tls_contexts

    async def scenario() -> list[tuple[int, int]]:
        pool = ConnectionPool()
        async with raw_server(lambda c, n: OK, server_context) as raw:
            for _ in range(3):
                assert await get(raw.url, pool) == b"ok"
            return raw.seen

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert asyncio.run(scenario()) == [(1, 1), (1, 2), (1, 3)]
        gc.collect()
    assert [str(w.message) for w in caught] == []
