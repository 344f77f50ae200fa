"""Bodies that do not pass through memory whole: a request body a handler reads as it
arrives (`BodyStream`, for routes added with `stream_body=True`), and a response whose
body is a file sent in pieces (`FileBody`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from wisp.serve.http.messages import HttpError, bad_request
from wisp.serve.http.parse import parse_chunk_size, parse_content_length

CHUNK = 256 * 1024


@dataclass(frozen=True, slots=True)
class FileBody:
    """A response body read from `path` (`size` bytes) as it is sent."""

    path: Path
    size: int
    content_type: str = "application/octet-stream"


class BodyStream:
    """A request's body, read on demand (`chunks()`) within `max_bytes` and with
    `read_timeout_s` for each read. `done` once it was read to its end: only then may
    the connection carry another request."""

    def __init__(self, reader: asyncio.StreamReader, headers: dict[str, str], *,
                 max_bytes: int, read_timeout_s: float,
                 on_first_read: Callable[[], None] | None = None) -> None:
        self._reader = reader
        self._max = max_bytes
        self._timeout = read_timeout_s
        self._on_first_read = on_first_read
        self.done = False
        self.size: int | None = None  # the declared content-length, when there is one
        te = headers.get("transfer-encoding")
        cl = headers.get("content-length")
        if te is not None and (cl is not None or te.lower() != "chunked"):
            raise bad_request("unsupported transfer-encoding / content-length")
        self._chunked = te is not None
        if cl is not None:
            self.size = parse_content_length(cl)
            if self.size > max_bytes:
                raise self.too_large()
        elif not self._chunked:
            self.size = 0

    def too_large(self) -> HttpError:
        return HttpError(413, "request_too_large", f"request body exceeds {self._max} bytes")

    async def _read(self, read: Awaitable[bytes]) -> bytes:
        try:
            async with asyncio.timeout(self._timeout):
                return await read
        except TimeoutError:
            raise HttpError(408, "invalid_request_error", "timed out reading the body") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            raise HttpError(400, "invalid_request_error", "the body ended early") from None

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, piece by piece; HttpError 413 past `max_bytes`."""
        if self._on_first_read is not None:
            self._on_first_read()
            self._on_first_read = None
        if self._chunked:
            async for piece in self._chunked_pieces():
                yield piece
        else:
            left = self.size or 0
            while left:
                piece = await self._read(self._reader.read(min(CHUNK, left)))
                if not piece:
                    raise HttpError(400, "invalid_request_error", "the body ended early")
                left -= len(piece)
                yield piece
        self.done = True

    async def _chunked_pieces(self) -> AsyncIterator[bytes]:
        total = 0
        while size := parse_chunk_size(await self._read(self._reader.readuntil(b"\r\n"))):
            total += size
            if total > self._max:
                raise self.too_large()
            left = size
            while left:
                piece = await self._read(self._reader.read(min(CHUNK, left)))
                if not piece:
                    raise HttpError(400, "invalid_request_error", "the body ended early")
                left -= len(piece)
                yield piece
            if await self._read(self._reader.readexactly(2)) != b"\r\n":
                raise bad_request("bad chunk framing")
        while await self._read(self._reader.readuntil(b"\r\n")) != b"\r\n":
            pass  # trailer fields: not used
