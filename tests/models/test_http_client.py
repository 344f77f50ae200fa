"""The HTTP client against small raw servers on 127.0.0.1 that misbehave on purpose."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.certificates import needs_openssl, self_signed
from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError
from wisp.models import http, pool

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK_HEAD = b"HTTP/1.1 200 OK\r\n"


@asynccontextmanager
async def raw_server(
    handler: Handler, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[str]:
    """Runs `handler` per connection after the request head is read; yields the base URL."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ssl_context)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"
    finally:
        server.close()


def chunk(data: bytes, extension: bytes = b"") -> bytes:
    return b"%x%s\r\n%s\r\n" % (len(data), extension, data)


def reply_with(*parts: bytes) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for part in parts:
            writer.write(part)
            await writer.drain()

    return handler


async def fetch(handler: Handler, method: str = "GET", read_timeout: float = 5.0) -> bytes:
    async with raw_server(handler) as url:
        response = await http.request(method, url + "/", {}, read_timeout=read_timeout)
        try:
            return await response.read()
        finally:
            await response.aclose()


async def fetch_lines(handler: Handler) -> list[bytes]:
    async with raw_server(handler) as url:
        response = await http.request("GET", url, {})
        lines = [line async for line in response.lines()]
        await response.aclose()
        return lines


def test_content_length_body() -> None:
    handler = reply_with(OK_HEAD + b"Content-Length: 5\r\n\r\nhello")
    assert asyncio.run(fetch(handler)) == b"hello"


def test_close_delimited_body() -> None:
    handler = reply_with(OK_HEAD + b"Connection: close\r\n\r\nuntil ", b"the end")
    assert asyncio.run(fetch(handler)) == b"until the end"


def test_a_short_content_length_body_is_a_stream_cut() -> None:
    handler = reply_with(OK_HEAD + b"Content-Length: 50\r\n\r\nonly this")
    with pytest.raises(StreamCutError, match="41 bytes of the body missing"):
        asyncio.run(fetch(handler))


def test_chunked_lines_across_chunk_boundaries() -> None:
    huge = b"y" * 2_000_000
    pieces = [huge[i : i + 4096] for i in range(0, len(huge), 4096)]
    body = [chunk(b"first\r\nsec", b";ext=1"), chunk(b"ond\n\n"), chunk(b"data: ")]
    body += [chunk(p) for p in pieces] + [chunk(b"\nlast without newline")]
    handler = reply_with(
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n",
        *body,
        b"0\r\nX-Trailer: ignored\r\n\r\n",
    )
    lines = asyncio.run(fetch_lines(handler))
    assert lines == [b"first", b"second", b"", b"data: " + huge, b"last without newline"]


def test_chunked_framing_cut_mid_chunk_is_a_stream_cut() -> None:
    handler = reply_with(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"a\r\nhal")
    with pytest.raises(StreamCutError):
        asyncio.run(fetch(handler))


def test_chunked_without_terminating_chunk_is_a_stream_cut() -> None:
    handler = reply_with(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n", chunk(b"whole"))
    with pytest.raises(StreamCutError, match="chunked framing"):
        asyncio.run(fetch(handler))


def test_a_peer_closing_right_after_the_last_chunk_is_fine() -> None:
    handler = reply_with(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n", chunk(b"all"), b"0\r\n")
    assert asyncio.run(fetch(handler)) == b"all"


def test_a_malformed_chunk_size_is_a_stream_cut() -> None:
    handler = reply_with(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n")
    with pytest.raises(StreamCutError, match="Malformed chunked encoding"):
        asyncio.run(fetch(handler))


def test_interim_responses_are_skipped_and_headers_normalised() -> None:
    handler = reply_with(
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 201 Created\r\nX-Thing: a\r\nx-thing: b\r\nRequest-Id: req_1\r\n"
        b"Content-Length: 2\r\n\r\nok",
    )

    async def go() -> http.HTTPResponse:
        async with raw_server(handler) as url:
            response = await http.request("POST", url, {}, b"{}")
            assert await response.read() == b"ok"
            await response.aclose()
            return response

    response = asyncio.run(go())
    assert (response.status, response.reason) == (201, "Created")
    assert response.headers["x-thing"] == "a, b"
    assert response.headers["request-id"] == "req_1"


def test_the_request_head_and_body_reach_the_server() -> None:
    received: list[bytes] = []

    async def go() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(OK_HEAD + b"Content-Length: 0\r\n\r\n")

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            received.append(await reader.readuntil(b"\r\n\r\n"))
            received.append(await reader.readexactly(7))
            writer.write(OK_HEAD + b"Content-Length: 0\r\n\r\n")
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        response = await http.request(
            "POST", f"http://127.0.0.1:{port}/p/v1?beta=true", {"x-a": "1"}, b'{"k":1}'
        )
        await response.aclose()
        server.close()

    asyncio.run(go())
    head = received[0].decode()
    assert head.startswith("POST /p/v1?beta=true HTTP/1.1\r\n")
    assert "\r\nhost: 127.0.0.1:" in head
    assert "\r\ncontent-length: 7\r\n" in head
    assert "\r\nx-a: 1\r\n" in head
    assert received[1] == b'{"k":1}'


def test_a_body_over_the_limit_is_refused() -> None:
    async def go() -> None:
        handler = reply_with(OK_HEAD + b"Content-Length: 100\r\n\r\n" + b"z" * 100)
        async with raw_server(handler) as url:
            response = await http.request("GET", url, {})
            await response.read(limit=10)

    with pytest.raises(ModelAPIError, match="larger than 10 bytes"):
        asyncio.run(go())


def test_a_head_response_has_no_body() -> None:
    handler = reply_with(OK_HEAD + b"Content-Length: 1000\r\n\r\n")
    assert asyncio.run(fetch(handler, "HEAD", read_timeout=5)) == b""


def test_a_server_that_never_answers_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the client gives up and closes

    with pytest.raises(RetryableAPIError, match="timed out"):
        asyncio.run(fetch(silent, read_timeout=0.1))


def test_a_body_that_stalls_times_out_per_read() -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(OK_HEAD + b"Content-Length: 10\r\n\r\nabc")
        await reader.read()

    with pytest.raises(RetryableAPIError, match=r"no data from the API for 0\.1s"):
        asyncio.run(fetch(stall, read_timeout=0.1))


def test_a_server_closing_without_a_response_is_a_connection_error() -> None:
    with pytest.raises(RetryableAPIError, match="Connection error") as caught:
        asyncio.run(fetch(reply_with()))
    assert caught.value.status is None


def test_garbage_instead_of_http_is_a_connection_error() -> None:
    with pytest.raises(RetryableAPIError, match="not an HTTP response"):
        asyncio.run(fetch(reply_with(b"SSH-2.0-OpenSSH\r\n\r\n")))


def test_header_values_with_line_breaks_are_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        asyncio.run(http.request("GET", "http://127.0.0.1:1/", {"x": "a\r\nInjected: 1"}))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8765", ("http", "127.0.0.1", 8765, "/")),
        (
            "https://api.anthropic.com/v1/messages",
            ("https", "api.anthropic.com", 443, "/v1/messages"),
        ),
        ("HTTP://h?q=1", ("http", "h", 80, "/?q=1")),
        ("http://user:pw@h:81/a?b#frag", ("http", "h", 81, "/a?b")),
        ("http://[::1]:9000/x", ("http", "::1", 9000, "/x")),
    ],
)
def test_parse_url(url: str, expected: tuple[str, str, int, str]) -> None:
    assert tuple(http.parse_url(url)) == expected


def test_parse_url_rejects_other_schemes_and_authority_formats() -> None:
    with pytest.raises(ValueError):
        http.parse_url("ftp://h/")
    with pytest.raises(ValueError):
        http.parse_url("http:///path")
    assert http.parse_url("http://[::1]:9000/").authority == "[::1]:9000"
    assert http.parse_url("https://h:443/").authority == "h"


def test_read_timeout_from_the_environment() -> None:
    assert http.default_read_timeout({"API_TIMEOUT_MS": "1500"}) == 1.5
    assert http.default_read_timeout({"API_TIMEOUT_MS": "nope"}) == 600.0
    assert http.default_read_timeout({}) == 600.0


@needs_openssl
def test_https_with_sni_against_a_local_tls_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    handler = reply_with(OK_HEAD + b"Content-Length: 6\r\n\r\nsecret")

    async def go() -> bytes:
        async with raw_server(handler, server_context) as url:
            response = await http.request("GET", url, {})
            try:
                return await response.read()
            finally:
                await response.aclose()

    # Not trusted yet: a verification failure is reported as a connection error.
    monkeypatch.setattr(pool, "_SSL_CONTEXT", None)
    with pytest.raises(RetryableAPIError, match="certificate verify failed"):
        asyncio.run(go())
    # Trusted through the standard variable that the default context reads.
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    monkeypatch.setattr(pool, "_SSL_CONTEXT", None)
    assert asyncio.run(go()) == b"secret"
