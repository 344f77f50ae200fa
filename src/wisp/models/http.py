"""A minimal async HTTP/1.1 client: streamed bodies, kept-alive connections.

Above: `wisp.models.anthropic` POSTs a JSON body and reads SSE lines from the response.
Below: `wisp.models.pool`, which opens connections and keeps idle ones for reuse.

Why not httpx/aiohttp: the provider sits on the hot path of `wisp -p`, and those cost tens
to hundreds of milliseconds to import. This module imports only what asyncio already loads.
Failures map onto `wisp.errors`: no connection -> `Unreachable` (retryable, status None), a
body that ends early -> `StreamCutError`. Without a `pool`, each request has its own connection.
HTTP(S)_PROXY is honoured where connections are opened (`wisp.models.pool`, `wisp.models.proxy`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import NamedTuple

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError, Unreachable
from wisp.models.chunked import ChunkedDecoder
from wisp.models.pool import (
    CONNECTION_ERRORS,
    URL,
    Connection,
    ConnectionPool,
    describe,
    open_connection,
    parse_url,
)

MAX_BODY = 10 * 1024 * 1024
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 600.0
_READ_SIZE = 256 * 1024


class Head(NamedTuple):
    status: int
    reason: str
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    keep_alive: bool  # the server lets the connection serve another request


def default_read_timeout(environ: Mapping[str, str] = os.environ) -> float:
    """`API_TIMEOUT_MS` (as Claude Code reads it), else 600 s."""
    raw = environ.get("API_TIMEOUT_MS", "").strip()
    try:
        value = float(raw) / 1000.0
    except ValueError:
        return DEFAULT_READ_TIMEOUT
    return value if value > 0 else DEFAULT_READ_TIMEOUT


class HTTPResponse:
    """A response whose body is read on demand. Close it to drop the connection at once;
    once the body was read to its end, the connection goes back to the pool instead."""

    def __init__(
        self,
        conn: Connection,
        head: Head,
        read_timeout: float,
        *,
        has_body: bool = True,
        pool: ConnectionPool | None = None,
    ) -> None:
        self.status, self.reason, self.headers = head.status, head.reason, head.headers
        self._conn: Connection | None = conn
        self._reader = conn.reader
        self._pool = pool if head.keep_alive else None
        self._timeout = read_timeout
        self._done = not has_body
        self._complete = not has_body  # the framing was read to its end: reusable
        self._closed = False
        self._source = self._body()  # one iterator: lines(), read() and finish() share it

    async def read(self, limit: int = MAX_BODY) -> bytes:
        parts: list[bytes] = []
        size = 0
        async for piece in self._source:
            size += len(piece)
            if size > limit:
                await self.aclose()
                raise ModelAPIError(f"Response body larger than {limit} bytes", status=self.status)
            parts.append(piece)
        return b"".join(parts)

    async def lines(self) -> AsyncIterator[bytes]:
        """Body lines without their `\\n` / `\\r\\n`. Lines of any length are fine."""
        async for batch in self.line_batches():
            for line in batch:
                yield line

    async def line_batches(self) -> AsyncGenerator[list[bytes], None]:
        """The body's lines, a list per network read: a reader that walks each list
        itself resumes this generator once per read instead of once per line."""
        pending: list[bytes] = []  # pieces of a line still missing its newline
        async for piece in self._source:
            parts = piece.split(b"\n")
            if len(parts) == 1:
                pending.append(piece)
                continue
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            rest = parts.pop()
            pending = [rest] if rest else []
            yield [line[:-1] if line.endswith(b"\r") else line for line in parts]
        if pending:
            yield [b"".join(pending)]

    async def finish(self, grace: float) -> None:
        """Read and discard what is left of the body (for a caller that has all it needs),
        so that the connection can be reused. Gives up quietly after `grace` seconds."""
        if self._done or self._closed:
            return
        try:
            async with asyncio.timeout(grace):
                async for _ in self._source:
                    pass
        except (TimeoutError, ModelAPIError):
            pass  # not reusable; aclose() drops the socket

    async def aclose(self) -> None:
        """Drop the connection. Safe to call from another task while the body is being read:
        that reader then sees the body end quietly instead of an error."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None and not self._release(conn):
            # Aborting skips flushing and TLS close_notify: an interrupt must be fast.
            await conn.close(abort=not self._done)

    def _release(self, conn: Connection) -> bool:
        """Back to the pool, if the response was read to its end and the server allows."""
        if self._complete and self._pool is not None:
            self._pool.put(conn)
            return True
        return False

    async def _body(self) -> AsyncIterator[bytes]:
        if self._done or self._closed:
            return
        encoding = self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        if "chunked" in encoding:
            source = self._chunked()
        elif length is not None and length.strip().isdigit():
            source = self._whole(int(length))
        else:
            source = self._until_close()
        async for piece in source:
            yield piece
        self._done = True
        if self._conn is not None and self._release(self._conn):
            self._conn = None  # released at once: nothing says the owner will close us

    async def _whole(self, length: int) -> AsyncIterator[bytes]:
        async for piece in self._sized(length):
            yield piece
        self._complete = not self._closed  # _sized only ends early (quietly) after aclose()

    async def _sized(self, remaining: int) -> AsyncIterator[bytes]:
        while remaining > 0:
            data = await self._recv(min(remaining, _READ_SIZE))
            if not data:
                self._cut(f"{remaining} bytes of the body missing")
                return
            remaining -= len(data)
            yield data

    async def _until_close(self) -> AsyncIterator[bytes]:
        while data := await self._recv(_READ_SIZE):
            yield data

    async def _chunked(self) -> AsyncIterator[bytes]:
        decoder = ChunkedDecoder()
        while not decoder.complete:
            data = await self._recv(_READ_SIZE)
            if not data:
                if not decoder.done:
                    self._cut(decoder.missing())  # raises, unless we closed it ourselves
                return  # after the last chunk but before its trailers ended: not reusable
            payload = decoder.feed(data)
            if payload:
                yield payload
        # `_done` only now: finish() must still drive this to the end to release the socket.
        self._done = True
        self._complete = not self._closed

    def _buffered(self) -> bytes | bytearray:
        """What the reader already holds. A read it can answer from there never waits, so
        it needs no timer: arming and cancelling one per read was a measurable part of a
        turn. (`_buffer` is StreamReader's own; without it, every read is timed.)"""
        buffered: bytes | bytearray = getattr(self._reader, "_buffer", b"")
        return buffered

    def _deadline(self, ready: bool) -> asyncio.Timeout:
        return asyncio.timeout(None if ready else self._timeout)

    async def _recv(self, n: int) -> bytes:
        try:
            async with self._deadline(bool(self._buffered())):
                return await self._reader.read(n)
        except TimeoutError:
            raise self._timed_out() from None
        except OSError as exc:
            self._cut(f"connection lost ({describe(exc)})")
            return b""

    def _cut(self, why: str) -> None:
        """An early end is an error unless we closed the connection ourselves."""
        if not (self._closed or self._done):
            raise StreamCutError(f"Response body ended early: {why}")

    def _timed_out(self) -> RetryableAPIError:
        return RetryableAPIError(f"Request timed out: no data from the API for {self._timeout:g}s")


class _Unanswered(Exception):
    """The connection failed before a single byte of the response arrived."""


async def request(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes = b"",
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    read_timeout: float | None = None,
    pool: ConnectionPool | None = None,
) -> HTTPResponse:
    """Send one request and return once the response head is in; the body streams later."""
    target = parse_url(url)
    timeout = default_read_timeout() if read_timeout is None else read_timeout
    data = _encode_head(method, target, headers, body, keep_alive=pool is not None) + body
    conn = pool.take(target.key) if pool is not None else None
    if conn is not None:
        try:
            return await _exchange(method, conn, data, timeout, pool)
        except _Unanswered:
            pass  # closed by the server while idle: nothing came back, so resend, unseen
    conn = await _connect(target, connect_timeout, pool)
    try:
        return await _exchange(method, conn, data, timeout, pool)
    except _Unanswered as exc:
        raise RetryableAPIError(f"Connection error: {exc}") from None


async def _connect(target: URL, connect_timeout: float, pool: ConnectionPool | None
                   ) -> Connection:
    if pool is None:
        return await open_connection(target.key, connect_timeout)
    try:
        conn = await open_connection(target.key, connect_timeout, pool.environ, pool.resolve)
    except Unreachable as exc:
        exc.reached_before = target.key in pool.reached
        raise
    pool.reached.add(target.key)
    return conn


async def _exchange(
    method: str, conn: Connection, data: bytes, timeout: float, pool: ConnectionPool | None
) -> HTTPResponse:
    """Send a request and read the response head. `_Unanswered` if no response byte came:
    on a reused connection that is a server closing it while idle, and resending is safe."""
    answered = False
    try:
        conn.writer.write(data)
        async with asyncio.timeout(timeout):
            await conn.writer.drain()
            first = await conn.reader.read(1)
            if not first:
                raise _Unanswered("connection closed by the server")
            answered = True
            head = await _read_head(conn.reader, first)
    except BaseException as exc:
        conn.abort()
        if isinstance(exc, TimeoutError):
            raise RetryableAPIError(f"Request timed out: no response within {timeout:g}s") from None
        if isinstance(exc, CONNECTION_ERRORS):
            if not answered:
                raise _Unanswered(describe(exc)) from None
            raise RetryableAPIError(f"Connection error: {describe(exc)}") from None
        raise
    has_body = method != "HEAD" and head.status not in (204, 304)
    return HTTPResponse(conn, head, timeout, has_body=has_body, pool=pool)


def _encode_head(
    method: str, url: URL, headers: Mapping[str, str], body: bytes, *, keep_alive: bool
) -> bytes:
    lines = [f"{method} {url.target} HTTP/1.1", f"host: {url.authority}"]
    lowered = {name.lower() for name in headers}
    if "content-length" not in lowered and (body or method in ("POST", "PUT", "PATCH")):
        lines.append(f"content-length: {len(body)}")
    if "connection" not in lowered:
        lines.append(f"connection: {'keep-alive' if keep_alive else 'close'}")
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"Header {name!r} contains a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


async def _read_head(reader: asyncio.StreamReader, first: bytes) -> Head:
    while True:
        head = first + await reader.readuntil(b"\r\n\r\n")
        first = b""
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/") or not code.isdigit():
            raise RetryableAPIError(f"Connection error: not an HTTP response: {status_line!r}")
        if not 100 <= int(code) < 200:
            break  # 1xx interim responses precede the real one
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    keep_alive = "close" not in tokens and (version == "HTTP/1.1" or "keep-alive" in tokens)
    return Head(int(code), reason, headers, keep_alive)
