"""Reading a request off a connection within the `Limits`: its head (idle and header
timeouts, size), its body whole (content-length or chunked, size and time) or as a stream
(`BodyStream`), and `100 Continue` when the client waits for one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass

from wisp.serve.http.body import BodyStream
from wisp.serve.http.messages import HttpError, Request, bad_request
from wisp.serve.http.parse import parse_chunk_size, parse_content_length


class Gone(Exception):
    """The client closed the connection mid-request: there is no one to answer."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_header_bytes: int = 64 * 1024
    max_body_bytes: int = 32 * 1024 * 1024
    max_upload_bytes: int = 500 * 1024 * 1024  # a streamed body (`stream_body` routes)
    max_query_fields: int = 1000
    header_timeout_s: float = 10.0  # from a request's first byte to its blank line
    body_timeout_s: float = 60.0  # for the whole body
    idle_timeout_s: float = 60.0  # a kept-alive connection with no request
    write_timeout_s: float = 30.0  # a write blocked on a client that does not read
    ping_s: float = 15.0  # SSE `: ping` after this long without a write; 0: none
    linger_s: float = 2.0  # reading what a refused client still sends before closing


class Connection:
    """One client's connection, as the `Server` serves it."""

    __slots__ = ("idle", "peer", "reader", "stream_task", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer: tuple[str, int] | None = (peer[0], peer[1]) if peer else None
        self.idle = False  # waiting for a request's first byte: safe to close at shutdown
        self.stream_task: asyncio.Task[None] | None = None


class RequestReader:
    """A `Server`'s reading of requests, within its limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    async def read_head(self, conn: Connection) -> bytes | None:
        """The request's bytes up to its blank line; None when the client leaves (or idles
        out) before sending one."""
        while True:
            first, rest = await self._head_bytes(conn)
            if not first:
                return None
            # Blank lines before a request line are to be ignored (RFC 9112 §2.2).
            head = (first + rest).lstrip(b"\r\n")
            if head:
                return head

    async def _head_bytes(self, conn: Connection) -> tuple[bytes, bytes]:
        # Waiting for the first byte is idling (idle_timeout_s); once it came, the rest of
        # the headers must follow within header_timeout_s, so a slow drip is cut. One
        # timeout, moved, as entering one costs more than the rest of the parse.
        reader = conn.reader
        conn.idle = True
        try:
            async with asyncio.timeout(self.limits.idle_timeout_s) as deadline:
                first = await reader.read(1)
                conn.idle = False
                if not first:
                    return b"", b""
                loop = asyncio.get_running_loop()
                deadline.reschedule(loop.time() + self.limits.header_timeout_s)
                return first, await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            if conn.idle:
                return b"", b""
            raise HttpError(408, "invalid_request_error", "timed out reading headers") from None
        except asyncio.LimitOverrunError:
            raise HttpError(
                431,
                "invalid_request_error",
                f"request headers exceed {self.limits.max_header_bytes} bytes",
            ) from None
        except (asyncio.IncompleteReadError, ConnectionError):
            return b"", b""
        finally:
            conn.idle = False

    def body_stream(self, conn: Connection, request: Request) -> BodyStream:
        headers = request.headers
        return BodyStream(conn.reader, headers, max_bytes=self.limits.max_upload_bytes,
                          read_timeout_s=self.limits.body_timeout_s,
                          on_first_read=lambda: self._continue(conn, headers))

    async def read_body(self, conn: Connection, request: Request) -> bytes:
        headers = request.headers
        te = headers.get("transfer-encoding")
        cl = headers.get("content-length")
        if te is not None:
            if cl is not None or te.lower() != "chunked":
                raise bad_request("unsupported transfer-encoding / content-length")
            self._continue(conn, headers)
            return await self._timed_body(self._read_chunked(conn.reader))
        if cl is None:
            return b""
        size = parse_content_length(cl)
        if size > self.limits.max_body_bytes:
            raise self._too_large()
        if size == 0:
            return b""
        self._continue(conn, headers)
        return await self._timed_body(conn.reader.readexactly(size))

    async def _timed_body(self, read: Awaitable[bytes]) -> bytes:
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                return await read
        except TimeoutError:
            raise HttpError(408, "invalid_request_error", "timed out reading the body") from None
        except asyncio.LimitOverrunError:
            raise bad_request("chunk header line too long") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            raise Gone from None

    async def _read_chunked(self, reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        total = 0
        while size := parse_chunk_size(await reader.readuntil(b"\r\n")):
            total += size
            if total > self.limits.max_body_bytes:
                raise self._too_large()
            parts.append(await reader.readexactly(size))
            if await reader.readexactly(2) != b"\r\n":
                raise bad_request("bad chunk framing")
        while await reader.readuntil(b"\r\n") != b"\r\n":
            pass  # trailer fields: not used
        return b"".join(parts)

    def _too_large(self) -> HttpError:
        limit = self.limits.max_body_bytes
        return HttpError(413, "request_too_large", f"request body exceeds {limit} bytes")

    @staticmethod
    def _continue(conn: Connection, headers: dict[str, str]) -> None:
        if headers.get("expect", "").lower() == "100-continue":
            conn.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
