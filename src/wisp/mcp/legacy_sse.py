"""MCP's HTTP+SSE transport (`"type": "sse"`, protocol 2024-11-05: deprecated, still
served by many servers).

A GET of the URL opens an event stream. Its first `endpoint` event names (relative to the
URL) where to POST messages; each POST is accepted with 202, and the answer arrives later
as a `message` event on the stream. So the stream is the server's stdout: its messages go
through the same `RpcChannel` as a stdio server's, which matches answers to requests,
answers the server's own requests and passes notifications on.

The endpoint must be on the URL's origin (scheme, host and port): the entry's headers,
which may hold a token, go to every POST. When the stream ends, the server is gone, as
when a stdio server's stdout closes: waiting requests fail and its status becomes
"failed" with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from urllib.parse import urljoin

from wisp.errors import McpError, ModelAPIError
from wisp.mcp.client import JSON
from wisp.mcp.jsonrpc import RpcChannel
from wisp.mcp.remote import (
    MAX_BODY,
    STREAM_IDLE_S,
    RemoteMcpServer,
    events,
    media_type,
    messages,
    same_origin,
)
from wisp.models.http import HTTPResponse
from wisp.models.pool import Resolve


class SseMcpServer(RemoteMcpServer):
    def __init__(self, name: str, url: str, headers: dict[str, str],
                 environ: Mapping[str, str], *, resolve: Resolve | None = None) -> None:
        super().__init__(name, "sse", url, headers, environ, resolve=resolve)
        self._link: _Link | None = None

    async def open(self) -> None:
        await self.close()
        try:
            async with asyncio.timeout(self.startup_timeout):
                self._link = await _Link.open(self)
        except TimeoutError:
            raise McpError(f"{self.url} named no endpoint within "
                           f"{self.startup_timeout:g} s") from None

    async def exchange(self, message: JSON, timeout: float | None) -> JSON:
        return await self._live().channel.request(message, timeout)

    async def send_notification(self, message: JSON) -> None:
        # Awaited, not queued: the server must see `initialized` before the next request.
        try:
            async with asyncio.timeout(self.startup_timeout):
                await self._live().post(message)
        except TimeoutError:
            raise McpError(f"{self.url} did not accept {message.get('method')} within "
                           f"{self.startup_timeout:g} s") from None

    async def close(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.close(McpError(f"MCP server {self.name} was closed"))
        await self.end_tasks()
        await self.pool.aclose()

    def _live(self) -> _Link:
        if self._link is None:
            raise McpError(f"MCP server {self.name} is not connected")
        return self._link

    def lost(self, link: _Link, error: McpError) -> None:
        # During the handshake the failed request itself reports the error.
        if link is self._link and self.status == "connected":
            self.status, self.error = "failed", str(error)


class _Link:
    """One open event stream, the endpoint it named, and the JSON-RPC channel over both."""

    def __init__(self, server: SseMcpServer, stream: HTTPResponse) -> None:
        self.server = server
        self.stream = stream
        self.events = events(stream)
        self.endpoint = ""
        self.channel = RpcChannel(self._write, server.notified, server.requested)
        self.listener: asyncio.Task[None] | None = None
        self.posts: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, server: SseMcpServer) -> _Link:
        stream = await server.send_ok("GET", server.url, {
            "accept": "text/event-stream", "cache-control": "no-cache"},
            read_timeout=STREAM_IDLE_S)
        link = cls(server, stream)
        try:
            if media_type(stream) != "text/event-stream":
                raise McpError(f"{server.url} answered with "
                               f"{media_type(stream) or 'no content type'}, not an event stream")
            link.endpoint = await link._endpoint()
        except BaseException as exc:
            await link.close(exc if isinstance(exc, McpError) else McpError("not connected"))
            raise
        link.listener = asyncio.ensure_future(link._listen())
        return link

    async def _endpoint(self) -> str:
        url = self.server.url
        async for event in self.events:  # leaves the generator open for _listen
            if event.event != "endpoint":
                continue
            target = urljoin(url, event.data.strip())
            if not same_origin(url, target):
                raise McpError(f"{url} named an endpoint on another origin: {target}")
            return target
        raise McpError(f"{url} ended its event stream without naming an endpoint")

    async def _listen(self) -> None:
        """The stream's messages, until it ends: then the server is gone."""
        try:
            async for event in self.events:
                if event.event not in (None, "message"):
                    continue
                for item in self._messages(event.data):
                    self.channel.feed(item)
            error = McpError(f"{self.server.url} ended its event stream")
        except McpError as exc:
            error = McpError(f"{self.server.url}: {exc}")
        self.channel.fail(error)
        self.server.lost(self, error)

    def _messages(self, data: str) -> list[JSON]:
        """An event's messages; one that can't be read fails the request it answers (a
        stray non-JSON event is ignored: see RpcChannel.garbled)."""
        try:
            return messages(data, self.server.url)
        except McpError as exc:
            self.channel.garbled(data.encode("utf-8", "replace"), str(exc))
            return []

    def _write(self, message: JSON) -> None:
        """The channel's writer: each message is a POST of its own, in the background."""
        task = asyncio.ensure_future(self._deliver(message))
        self.posts.add(task)
        task.add_done_callback(self.posts.discard)

    async def _deliver(self, message: JSON) -> None:
        try:
            async with asyncio.timeout(self.server.read_timeout):
                await self.post(message)
        except (McpError, TimeoutError) as exc:
            key = message.get("id")
            if "method" in message and isinstance(key, (int, str)):
                error = exc if isinstance(exc, McpError) else McpError(
                    f"{self.endpoint} did not accept {message.get('method')}")
                self.channel.reject(key, error)  # its answer will never come

    async def post(self, message: JSON) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        response = await self.server.send_ok("POST", self.endpoint,
                                              {"content-type": "application/json"}, body)
        try:
            await response.read(MAX_BODY)  # "Accepted": read so the socket can be reused
        except ModelAPIError:
            pass  # accepted all the same
        finally:
            await response.aclose()

    async def close(self, error: McpError) -> None:
        self.channel.fail(error)
        await self.stream.aclose()  # a read in progress then ends quietly
        tasks = [task for task in (self.listener, *self.posts) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(RuntimeError, McpError):  # not started, or ended already
            await self.events.aclose()
