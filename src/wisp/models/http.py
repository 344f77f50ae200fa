"""A minimal async HTTP/1.1 client: one request per connection, streamed bodies.

Above: `wisp.models.anthropic` POSTs a JSON body and reads SSE lines from the response.
Below: `asyncio.open_connection` (plain TCP, or TLS with the default context and SNI).

Why not httpx/aiohttp: the provider sits on the hot path of `wisp -p`, and those cost tens
to hundreds of milliseconds to import. This module imports only what asyncio already loads.
Failures map onto `wisp.errors`: no connection -> `RetryableAPIError(status=None)`, a body
that ends early -> `StreamCutError`. There is no connection pool (each request opens
its own connection) and no proxy support (`HTTPS_PROXY` is ignored).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, NamedTuple

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError

MAX_BODY = 10 * 1024 * 1024
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 600.0
# Status and header lines are short; asyncio's 64 KiB line limit is ample and guards memory.
_HEAD_LIMIT = 64 * 1024
_READ_SIZE = 256 * 1024
_CONNECTION_ERRORS = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)


class URL(NamedTuple):
    scheme: str
    host: str
    port: int
    target: str  # path and query, as sent on the request line

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def parse_url(url: str) -> URL:
    """Split an absolute http(s) URL. Hand-rolled: urllib.parse is not needed for this."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"Unsupported URL (need http:// or https://): {url!r}")
    slash = [i for i in (rest.find("/"), rest.find("?")) if i >= 0]
    cut = min(slash) if slash else len(rest)
    authority, target = rest[:cut].rpartition("@")[2], rest[cut:] or "/"
    if target.startswith("?"):
        target = "/" + target
    target = target.partition("#")[0]
    host, port = authority, 443 if scheme == "https" else 80
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        if tail.startswith(":") and tail[1:]:
            port = int(tail[1:])
    elif ":" in authority:
        host, _, port_text = authority.rpartition(":")
        port = int(port_text) if port_text else port
    if not host:
        raise ValueError(f"URL has no host: {url!r}")
    return URL(scheme, host, port, target)


def default_read_timeout(environ: Mapping[str, str] = os.environ) -> float:
    """`API_TIMEOUT_MS` (as Claude Code reads it), else 600 s."""
    raw = environ.get("API_TIMEOUT_MS", "").strip()
    try:
        value = float(raw) / 1000.0
    except ValueError:
        return DEFAULT_READ_TIMEOUT
    return value if value > 0 else DEFAULT_READ_TIMEOUT


class HTTPResponse:
    """A response whose body is read on demand. Close it to drop the connection at once."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        head: tuple[int, str, dict[str, str]],
        read_timeout: float,
        *,
        has_body: bool = True,
    ) -> None:
        self.status, self.reason, self.headers = head
        self._reader = reader
        self._writer = writer
        self._timeout = read_timeout
        self._done = not has_body
        self._closed = False

    async def read(self, limit: int = MAX_BODY) -> bytes:
        parts: list[bytes] = []
        size = 0
        async for piece in self._body():
            size += len(piece)
            if size > limit:
                await self.aclose()
                raise ModelAPIError(f"Response body larger than {limit} bytes", status=self.status)
            parts.append(piece)
        return b"".join(parts)

    async def lines(self) -> AsyncIterator[bytes]:
        """Body lines without their `\\n` / `\\r\\n`. Lines of any length are fine."""
        pending: list[bytes] = []  # pieces of a line still missing its newline
        async for piece in self._body():
            parts = piece.split(b"\n")
            if len(parts) == 1:
                pending.append(piece)
                continue
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            rest = parts.pop()
            pending = [rest] if rest else []
            for line in parts:
                yield line[:-1] if line.endswith(b"\r") else line
        if pending:
            yield b"".join(pending)

    async def aclose(self) -> None:
        """Drop the connection. Safe to call from another task while the body is being read:
        that reader then sees the body end quietly instead of an error."""
        if self._closed:
            return
        self._closed = True
        transport = self._writer.transport
        if self._done:
            transport.close()
        else:
            transport.abort()  # skip flushing and TLS close_notify: an interrupt must be fast
        try:
            async with asyncio.timeout(1.0):
                await self._writer.wait_closed()
        except (OSError, TimeoutError):
            pass

    async def _body(self) -> AsyncIterator[bytes]:
        if self._done or self._closed:
            return
        encoding = self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        if "chunked" in encoding:
            source = self._chunked()
        elif length is not None and length.strip().isdigit():
            source = self._sized(int(length))
        else:
            source = self._until_close()
        async for piece in source:
            yield piece
        self._done = True

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
        while True:
            line = await self._line()
            size_text = line.partition(b";")[0].strip()
            if not line:
                return  # only reached after our own aclose(); framing errors raise in _line
            try:
                size = int(size_text, 16)
            except ValueError:
                raise StreamCutError(f"Malformed chunked encoding: {line[:40]!r}") from None
            if size == 0:
                # The body is complete; trailers are skipped, and a peer that closes before
                # their final CRLF has still sent everything that matters.
                self._done = True
                while (await self._line()).strip():
                    pass
                return
            async for piece in self._sized(size):
                yield piece
            await self._line()  # the CRLF after the chunk data

    async def _line(self) -> bytes:
        try:
            async with asyncio.timeout(self._timeout):
                return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            self._cut("connection closed inside chunked framing")
            return b""
        except asyncio.LimitOverrunError:
            raise StreamCutError("Malformed chunked encoding: overlong framing line") from None
        except TimeoutError:
            raise self._timed_out() from None
        except OSError as exc:
            self._cut(f"connection lost ({_describe(exc)})")
            return b""

    async def _recv(self, n: int) -> bytes:
        try:
            async with asyncio.timeout(self._timeout):
                return await self._reader.read(n)
        except TimeoutError:
            raise self._timed_out() from None
        except OSError as exc:
            self._cut(f"connection lost ({_describe(exc)})")
            return b""

    def _cut(self, why: str) -> None:
        """An early end is an error unless we closed the connection ourselves."""
        if not (self._closed or self._done):
            raise StreamCutError(f"Response body ended early: {why}")

    def _timed_out(self) -> RetryableAPIError:
        return RetryableAPIError(f"Request timed out: no data from the API for {self._timeout:g}s")


async def request(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes = b"",
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    read_timeout: float | None = None,
) -> HTTPResponse:
    """Send one request and return once the response head is in; the body streams later."""
    target = parse_url(url)
    timeout = default_read_timeout() if read_timeout is None else read_timeout
    head = _encode_head(method, target, headers, body)
    reader, writer = await _connect(target, connect_timeout)
    try:
        writer.write(head + body)
        async with asyncio.timeout(timeout):
            await writer.drain()
            head_in = await _read_head(reader)
    except BaseException as exc:
        writer.transport.abort()
        if isinstance(exc, TimeoutError):
            raise RetryableAPIError(f"Request timed out: no response within {timeout:g}s") from None
        if isinstance(exc, _CONNECTION_ERRORS):
            raise RetryableAPIError(f"Connection error: {_describe(exc)}") from None
        raise
    has_body = method != "HEAD" and head_in[0] not in (204, 304)
    return HTTPResponse(reader, writer, head_in, timeout, has_body=has_body)


def _encode_head(method: str, url: URL, headers: Mapping[str, str], body: bytes) -> bytes:
    lines = [f"{method} {url.target} HTTP/1.1", f"host: {url.authority}"]
    lowered = {name.lower() for name in headers}
    if "content-length" not in lowered and (body or method in ("POST", "PUT", "PATCH")):
        lines.append(f"content-length: {len(body)}")
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"Header {name!r} contains a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
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
    return int(code), reason, headers


async def _connect(
    url: URL, connect_timeout: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    kwargs: dict[str, Any] = {"limit": _HEAD_LIMIT}
    if url.scheme == "https":
        kwargs.update(ssl=_ssl_context(), server_hostname=url.host)
    where = f"{url.host}:{url.port}"
    try:
        async with asyncio.timeout(connect_timeout):
            return await asyncio.open_connection(url.host, url.port, **kwargs)
    except TimeoutError:
        raise RetryableAPIError(f"Connection error: timed out connecting to {where}") from None
    except _CONNECTION_ERRORS as exc:
        raise RetryableAPIError(
            f"Connection error: could not connect to {where} ({_describe(exc)})"
        ) from None


_SSL_CONTEXT: Any = None


def _ssl_context() -> Any:
    # Imported lazily: plain-http runs (the local fake server) never pay for TLS setup,
    # and loading the CA bundle (~10 ms) happens once per process.
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import ssl

        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return "connection closed by the server"
    if isinstance(exc, asyncio.LimitOverrunError):
        return "response head too large"
    if isinstance(exc, OSError) and exc.errno and exc.errno > 0:
        strerror = str(exc.strerror or "")
        # asyncio words refusals as "Connect call failed ('127.0.0.1', 1)"; the errno's own
        # text ("Connection refused") says more. SSL errors keep their message.
        if not strerror or strerror.startswith("Connect call failed"):
            return os.strerror(exc.errno)
        return strerror
    if isinstance(exc, OSError) and exc.strerror:
        return str(exc.strerror)  # e.g. getaddrinfo's "Name or service not known"
    return str(exc) or type(exc).__name__
