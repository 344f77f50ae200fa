"""MCP's streamable HTTP transport (`"type": "http"`, protocol 2025-03-26 and later).

Every message wisp sends is a POST of JSON to the server's one URL, accepting
`application/json, text/event-stream`. A request is answered in that POST's response:
either a JSON body, or an event stream that carries the answer, perhaps after requests
and notifications of the server's own (a request is answered with another POST, as
`RpcChannel` answers one over stdio; a notification goes to `McpServer.notified`). A
notification is accepted with 202 and no body.

Session. The `Mcp-Session-Id` the server gives in initialize's answer goes back on every
later request, with `MCP-Protocol-Version` (the version initialize settled on). A 404 to a
request that carried the session means the server dropped it: as the spec says, wisp
starts a new session (a new handshake) and sends the request again, once. Closing ends
the session with a DELETE, best effort.

Not done: the optional GET stream for messages outside any request, and resuming a cut
stream with Last-Event-ID (a cut stream fails its request).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any

from wisp.errors import McpError, McpTimeout, ModelAPIError
from wisp.mcp.client import JSON
from wisp.mcp.jsonrpc import reply_to
from wisp.mcp.remote import (
    MAX_BODY,
    RemoteMcpServer,
    events,
    media_type,
    messages,
    refusal,
)
from wisp.models.http import HTTPResponse
from wisp.models.pool import Resolve

ACCEPT = "application/json, text/event-stream"
CLOSE_TIMEOUT_S = 2.0  # the DELETE that ends a session: best effort, never a long wait
FINISH_GRACE_S = 0.2  # after the answer, how long the server may take to end its stream


class SessionExpired(McpError):
    """A 404 to a request that carried a session id: the server forgot the session."""


class HttpMcpServer(RemoteMcpServer):
    def __init__(self, name: str, url: str, headers: dict[str, str],
                 environ: Mapping[str, str], *, resolve: Resolve | None = None) -> None:
        super().__init__(name, "http", url, headers, environ, resolve=resolve)
        self._session: str | None = None
        self._protocol: str | None = None
        self._renewal = asyncio.Lock()
        self._renewing = False

    async def open(self) -> None:
        await self.close()  # a reconnect starts a new session

    async def exchange(self, message: JSON, timeout: float | None) -> JSON:
        method = str(message.get("method"))
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(message)
        except TimeoutError:
            self._cancel(message, "timed out")
            raise McpTimeout(f"{method} timed out after {timeout or 0:g} s") from None
        except asyncio.CancelledError:
            self._cancel(message, "interrupted")  # the server may stop work nobody waits for
            raise

    async def send_notification(self, message: JSON) -> None:
        try:
            async with asyncio.timeout(self.startup_timeout):
                response = await self._post(message)
                await _drain(response)
        except TimeoutError:
            raise McpError(f"{self.url} did not accept {message.get('method')} within "
                           f"{self.startup_timeout:g} s") from None

    async def close(self) -> None:
        headers = self._session_headers()
        self._session, self._protocol = None, None
        await self.end_tasks()
        if "mcp-session-id" in headers:  # a server without sessions has none to end
            with contextlib.suppress(McpError, TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await _drain(await self.send("DELETE", self.url, headers))
        await self.pool.aclose()

    def _session_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self._session is not None:
            headers["mcp-session-id"] = self._session
        if self._protocol is not None:
            headers["mcp-protocol-version"] = self._protocol
        return headers

    # One request -----------------------------------------------------------------------

    async def _exchange(self, message: JSON) -> JSON:
        sent_with = self._session
        try:
            return await self._roundtrip(message)
        except SessionExpired:
            if self._renewing or message.get("method") == "initialize":
                raise
        await self._renew(sent_with)
        return await self._roundtrip(message)

    async def _roundtrip(self, message: JSON) -> JSON:
        response = await self._post(message)
        initialize = message.get("method") == "initialize"
        if initialize:
            self._session = response.headers.get("mcp-session-id") or None
        try:
            answer = await self._answer_in(response, message)
        finally:
            await response.aclose()
        if initialize:
            result = answer.get("result")
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            self._protocol = version if isinstance(version, str) else None
        return answer

    async def _post(self, message: JSON) -> HTTPResponse:
        headers = {"content-type": "application/json", "accept": ACCEPT,
                   **self._session_headers()}
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        response = await self.send("POST", self.url, headers, body)
        if response.status == 404 and "mcp-session-id" in headers:
            await response.aclose()
            raise SessionExpired(f"{self.url} no longer knows MCP session "
                                 f"{headers['mcp-session-id']}")
        if 200 <= response.status < 300:
            return response
        raise await refusal(self.url, response)

    async def _answer_in(self, response: HTTPResponse, message: JSON) -> JSON:
        """The answer to `message` in its POST's response, handling what else comes."""
        method, key = message.get("method"), message.get("id")
        kind = media_type(response)
        if kind == "application/json":
            try:
                body = await response.read(MAX_BODY)
            except ModelAPIError as exc:
                raise McpError(f"{self.url}: {exc}") from None
            for item in messages(body, self.url):
                if (answer := self._take(item, key)) is not None:
                    return answer
        elif kind == "text/event-stream":
            if (answer := await self._answer_in_stream(response, key)) is not None:
                return answer
        elif response.status == 202:
            raise McpError(f"{self.url} accepted {method} but sent no answer")
        else:
            raise McpError(f"{self.url} answered {method} with {kind or 'no content type'}, "
                           "not JSON or an event stream")
        raise McpError(f"{self.url} did not answer {method}")

    async def _answer_in_stream(self, response: HTTPResponse, key: object) -> JSON | None:
        """The answer among an event stream's messages (None: the stream ended first)."""
        async for event in events(response):
            if event.event not in (None, "message"):
                continue
            for item in messages(event.data, self.url):
                if (answer := self._take(item, key)) is not None:
                    await response.finish(FINISH_GRACE_S)  # so the socket is reused
                    return answer
        return None

    def _take(self, item: JSON, key: object) -> JSON | None:
        """`item` if it is the answer; a request or notification of the server's is dealt
        with here."""
        method = item.get("method")
        if isinstance(method, str):
            if "id" in item:
                self.spawn(self._serve(item["id"], method, item.get("params")))
            else:
                self.notified(method, item.get("params"))
            return None
        if item.get("id") == key or (item.get("id") is None and "error" in item):
            return item  # an error without an id: the server could not read the request
        return None

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        """Answers a request of the server's (an elicitation asks the user) by a POST."""
        try:
            result = await self.requested(method, params)
        except Exception as exc:
            reply: JSON = {"jsonrpc": "2.0", "id": request_id,
                           "error": {"code": -32603, "message": str(exc)}}
        else:
            reply = (reply_to(request_id, method) if result is None
                     else {"jsonrpc": "2.0", "id": request_id, "result": result})
        await self._post_quietly(reply)

    # Around requests ---------------------------------------------------------------------

    async def _renew(self, expired: str | None) -> None:
        """A new session after the server dropped `expired` (unless one was made since)."""
        async with self._renewal:
            if self._session != expired:
                return
            self._session, self._protocol, self._renewing = None, None, True
            tools = self.tools
            try:
                await self.handshake()
            finally:
                self._renewing = False
        if self.tools != tools and self.on_tools_changed is not None:
            self.on_tools_changed()

    def _cancel(self, message: JSON, reason: str) -> None:
        if message.get("method") == "initialize":
            return  # the spec forbids cancelling it
        self.spawn(self._post_quietly({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": message.get("id"), "reason": f"wisp: {reason}"}}))

    async def _post_quietly(self, message: JSON) -> None:
        """A reply or notification nobody waits on: its failure changes nothing."""
        with contextlib.suppress(McpError, TimeoutError):
            async with asyncio.timeout(self.startup_timeout):
                await _drain(await self._post(message))


async def _drain(response: HTTPResponse) -> None:
    """Read a body nobody needs, so the connection can serve the next request."""
    try:
        await response.read(MAX_BODY)
    except ModelAPIError:
        pass
    finally:
        await response.aclose()
