"""A `multipart/form-data` body read as it streams in (RFC 7578): parts come out one at
a time, a file part's bytes in pieces, so an upload never sits in memory whole.

    parser = Multipart(boundary)
    async for event in parser.feed_all(chunks):
        match event:
            case Part(name, filename, content_type): ...   # a part begins
            case bytes(): ...                              # its next piece of data
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from wisp.serve.shapes import ShapeError

MAX_HEAD = 16 * 1024


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    filename: str | None
    content_type: str | None


def boundary_of(content_type: str) -> str:
    """The boundary parameter of a `multipart/form-data` content type."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        raise ShapeError("content-type", "expected multipart/form-data")
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "boundary" and value.strip('"'):
            return value.strip('"')
    raise ShapeError("content-type", "multipart/form-data without a boundary")


def _disposition(value: str) -> tuple[str, str | None]:
    fields: dict[str, str] = {}
    for item in value.split(";")[1:]:
        key, _, raw = item.strip().partition("=")
        fields[key.lower()] = raw.strip().strip('"')
    if "name" not in fields:
        raise ShapeError("body", "a multipart part has no name")
    return fields["name"], fields.get("filename")


def _part(head: bytes) -> Part:
    headers: dict[str, str] = {}
    for line in head.decode("utf-8", "replace").split("\r\n"):
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    name, filename = _disposition(headers.get("content-disposition", ""))
    return Part(name, filename, headers.get("content-type"))


class Multipart:
    def __init__(self, boundary: str) -> None:
        self._delimiter = b"\r\n--" + boundary.encode("latin-1")
        self._buffer = b"\r\n"  # so the first delimiter looks like every other one
        self._state = "preamble"
        self.finished = False

    async def feed_all(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[Part | bytes]:
        async for chunk in chunks:
            for event in self.feed(chunk):
                yield event
        if not self.finished:
            raise ShapeError("body", "the multipart body ended before its closing boundary")

    def feed(self, chunk: bytes) -> Iterator[Part | bytes]:
        self._buffer += chunk
        while True:
            step = getattr(self, f"_{self._state}")()
            if step is None:
                return
            if step is not True:
                yield step

    # Each state returns an event, True (go on) or None (needs more bytes).

    def _preamble(self) -> bool | None:
        at = self._buffer.find(self._delimiter)
        if at < 0:
            self._buffer = self._buffer[-len(self._delimiter):]
            return None
        self._buffer = self._buffer[at + len(self._delimiter):]
        self._state = "after_delimiter"
        return True

    def _after_delimiter(self) -> bool | None:
        if len(self._buffer) < 2:
            return None
        if self._buffer.startswith(b"--"):
            self.finished = True
            self._state = "epilogue"
        elif self._buffer.startswith(b"\r\n"):
            self._state = "head"
        else:
            raise ShapeError("body", "malformed multipart delimiter")
        self._buffer = self._buffer[2:]
        return True

    def _head(self) -> Part | None:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD:
                raise ShapeError("body", "multipart part headers too large")
            return None
        part = _part(self._buffer[:end])
        self._buffer = self._buffer[end + 4:]
        self._state = "data"
        return part

    def _data(self) -> bytes | bool | None:
        at = self._buffer.find(self._delimiter)
        if at >= 0:
            data, self._buffer = self._buffer[:at], self._buffer[at + len(self._delimiter):]
            self._state = "after_delimiter"
            return data if data else True
        keep = len(self._delimiter) - 1  # a delimiter may straddle two chunks
        if len(self._buffer) <= keep:
            return None
        data, self._buffer = self._buffer[:-keep], self._buffer[-keep:]
        return data

    def _epilogue(self) -> None:
        self._buffer = b""
