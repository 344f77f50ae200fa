"""Server-Sent Events: the event format, the chunks a stream is framed in, and the
SseWriter an EventStream's producer writes to while the server watches the client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

# Made once: json.dumps with non-default options builds an encoder per call.
_ASCII_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"))


class Disconnected(ConnectionError):
    """The client of a stream went away; nothing more can be sent to it."""


def _split_data(data: str) -> list[str]:
    # CR/LF only: str.splitlines also splits on U+2028, U+0085, …, which a JSON string may
    # hold raw and which SSE decoders (the SDK's splits bytes) keep inside a line.
    if "\n" not in data and "\r" not in data:
        return [data]
    return data.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def format_event(data: str, event: str | None = None, id: str | None = None) -> bytes:
    """One SSE event: `event:`/`id:` lines when given, one `data:` line per line of
    `data`, and the blank line that ends it."""
    parts: list[str] = []
    if event is not None:
        _check_field("event", event)
        parts.append(f"event: {event}\n")
    if id is not None:
        _check_field("id", id)
        parts.append(f"id: {id}\n")
    parts.extend(f"data: {line}\n" for line in _split_data(data))
    parts.append("\n")
    return "".join(parts).encode()


def _check_field(name: str, value: str) -> None:
    if "\n" in value or "\r" in value or (name == "id" and "\0" in value):
        raise ValueError(f"an SSE {name} cannot contain a line break: {value!r}")


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


LAST_CHUNK = b"0\r\n\r\n"


class SseWriter:
    """What an EventStream's producer writes to. Each event goes out as one chunk at once;
    `send` waits while the client is slow to read, up to the write timeout (then the
    client counts as gone)."""

    __slots__ = ("_gone", "_timeout_s", "_writer", "events_sent", "last_write", "tainted")

    def __init__(self, writer: asyncio.StreamWriter, write_timeout_s: float) -> None:
        self._writer = writer
        self._timeout_s = write_timeout_s
        self._gone = asyncio.Event()
        self.events_sent = 0
        self.last_write = asyncio.get_running_loop().time()
        self.tainted = False  # the client sent bytes mid-stream: do not reuse the connection

    @property
    def disconnected(self) -> bool:
        return self._gone.is_set()

    async def wait_disconnected(self) -> None:
        await self._gone.wait()

    async def send(self, data: str, event: str | None = None, id: str | None = None) -> None:
        await self._write(format_event(data, event, id))
        self.events_sent += 1

    async def send_json(self, obj: Any, event: str | None = None, id: str | None = None) -> None:
        """`send` of `obj` as compact ASCII JSON (safe for any client's line splitting)."""
        await self.send(_ASCII_JSON_ENCODER.encode(obj), event, id)

    async def comment(self, text: str = "ping") -> None:
        """A `: text` line, which clients ignore: keeps proxies and idle timers at bay."""
        _check_field("comment", text)
        await self._write(f": {text}\n\n".encode())

    async def _write(self, payload: bytes) -> None:
        if self._gone.is_set():
            raise Disconnected("the client closed the stream")
        self._writer.write(_chunk(payload))
        self.last_write = asyncio.get_running_loop().time()
        await self.drain()

    async def drain(self) -> None:
        try:
            await drain(self._writer, self._timeout_s)
        except (ConnectionError, TimeoutError) as exc:
            self._mark_gone()
            raise Disconnected("the client stopped reading the stream") from exc

    def _mark_gone(self) -> None:
        self._gone.set()


async def drain(writer: asyncio.StreamWriter, timeout_s: float) -> None:
    """Waits until `writer` can take more, at most `timeout_s` (TimeoutError)."""
    if writer.transport.get_write_buffer_size() == 0:
        # All of it went to the socket at once (the usual case): nothing to wait for, and
        # a timeout costs more than the rest of a small request.
        if writer.transport.is_closing():
            raise ConnectionResetError("connection lost")
        return
    async with asyncio.timeout(timeout_s):
        await writer.drain()


async def watch_client(reader: asyncio.StreamReader, out: SseWriter) -> None:
    """Reads the socket while a stream is open, to notice the client leaving (EOF)."""
    try:
        while await reader.read(65536):
            out.tainted = True  # a pipelined request: we cannot answer it after the stream
    except (ConnectionError, OSError):
        pass
    out._mark_gone()


async def pump(
    producer: asyncio.Task[None], watcher: asyncio.Task[None], out: SseWriter, ping_s: float
) -> None:
    """Waits for the producer to finish or the client to leave, pinging while idle."""
    loop = asyncio.get_running_loop()
    while True:
        timeout = None if ping_s <= 0 else out.last_write + ping_s - loop.time()
        if timeout is not None and timeout <= 0:
            try:
                await out.comment("ping")
            except Disconnected:
                return
            continue
        done, _ = await asyncio.wait(
            (producer, watcher), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if done:
            return
