"""What MCP's two HTTP transports share: one HTTP exchange with the server (the entry's
headers on every request), how a refusal reads, and JSON-RPC messages out of a body or
an event stream.

Above: `HttpMcpServer` (streamable HTTP, `wisp.mcp.streamable_http`) and `SseMcpServer`
(the legacy HTTP+SSE transport, `wisp.mcp.legacy_sse`), built by `wisp.mcp.config` only
when an entry names one. Below: wisp's own HTTP/1.1 client (`wisp.models.http`, one
connection pool per server so requests reuse a socket; proxies from the session's
environment, loopback never proxied) and its SSE decoder (`wisp.models.sse`).

Failure. Any failure to reach the server (refused, unresolvable, timed out, a non-2xx
answer, a body that is not JSON-RPC) is an `McpError` that names the URL: the server is
"failed" with that reason, the run goes on. A 401 is `McpAuthRequired`: "needs-auth".

Authorization. A server that needs a token gets it through the entry's `headers`, e.g.
`"Authorization": "Bearer ${MY_TOKEN}"`, or from MCP's OAuth flow, which a host starts
with `mcp_authenticate` (`wisp.mcp.oauth`); without one it reports "needs-auth" and why.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Coroutine, Mapping
from typing import Any
from urllib.parse import urljoin

from wisp.errors import McpError, ModelAPIError
from wisp.mcp.client import (
    DEFAULT_STARTUP_MS,
    DEFAULT_TOOL_MS,
    JSON,
    McpAuthRequired,
    McpServer,
    timeout_s,
)
from wisp.models.http import HTTPResponse, request
from wisp.models.pool import ConnectionPool, Resolve, parse_url
from wisp.models.sse import SSEDecoder, SSEEvent

# A stream the server writes to when it has something to say may be quiet for hours.
STREAM_IDLE_S = 24 * 3600.0
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
REFUSAL_READ_S = 2.0  # how long the body of a refusal may take: it only adds detail
MAX_BODY = 16 * 1024 * 1024
_EXCERPT = 200


class RemoteMcpServer(McpServer):
    """A server at a URL. `source` (and the status' `transport`) is "http" or "sse"."""

    def __init__(self, name: str, kind: str, url: str, headers: dict[str, str],
                 environ: Mapping[str, str], *, resolve: Resolve | None = None) -> None:
        """`resolve`: the address each new connection goes to (`wisp.models.pool`), for a
        caller that must check where it connects (the session service's egress rule)."""
        super().__init__(name, kind)
        self.url, self.headers = url, headers
        self.startup_timeout: float = timeout_s(environ, "MCP_TIMEOUT", DEFAULT_STARTUP_MS)
        self.tool_timeout: float = timeout_s(environ, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_MS)
        # Each request is bounded as a whole by its own timeout (start-up or tool call);
        # this only stops a single read from outliving the longest of them.
        self.read_timeout = max(self.startup_timeout, self.tool_timeout)
        self.pool = ConnectionPool(environ=environ, resolve=resolve)

    def config_entry(self) -> JSON:
        # No headers: they may hold a token, and the host that sent them knows them already.
        return {"type": self.source, "url": self.url}

    async def send(self, method: str, url: str, protocol: dict[str, str], body: bytes = b"",
                   *, read_timeout: float | None = None) -> HTTPResponse:
        """One request, whatever its answer, after redirects on the same origin (a server
        mounted at `/mcp/` answers `/mcp` with a 307). `protocol`'s headers (lower-case
        names) win over the entry's own of the same name."""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in protocol}
        headers.update(protocol)
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = await request(method, url, headers, body,
                                         connect_timeout=self.startup_timeout,
                                         read_timeout=read_timeout or self.read_timeout,
                                         pool=self.pool)
            except (ModelAPIError, ValueError) as exc:  # ValueError: a URL parse_url refuses
                raise McpError(f"{url}: {exc}") from None
            try:
                target = redirect(method, url, response)
            except McpError:
                await response.aclose()
                raise
            if target is None:
                return response
            await response.aclose()
            url = target
        raise McpError(f"{url}: more than {MAX_REDIRECTS} redirects")

    async def send_ok(self, method: str, url: str, protocol: dict[str, str], body: bytes = b"",
                      *, read_timeout: float | None = None) -> HTTPResponse:
        """`send`, and a 2xx answer or the error that says why not."""
        response = await self.send(method, url, protocol, body, read_timeout=read_timeout)
        if 200 <= response.status < 300:
            return response
        raise await refusal(url, response)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Background work of this server (a reply, a cancellation), ended by `close`."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def end_tasks(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def redirect(method: str, url: str, response: HTTPResponse) -> str | None:
    """Where a redirect that keeps the method leads, if it does; None when the response
    is not one. Only on the same origin: the entry's headers may hold a token."""
    status, location = response.status, response.headers.get("location")
    if not location or status not in _REDIRECTS or (status < 307 and method != "GET"):
        return None  # 301-303 turn a POST into a GET: not something to follow blindly
    target = urljoin(url, location)
    if not same_origin(url, target):
        raise McpError(f"{url} redirects to another origin ({target}): configure that URL "
                       "if it is meant")
    return target


def same_origin(a: str, b: str) -> bool:
    try:
        return parse_url(a).key == parse_url(b).key
    except ValueError:
        return False


async def refusal(url: str, response: HTTPResponse) -> McpError:
    """The error for a non-2xx answer, with what its body says about it."""
    try:
        async with asyncio.timeout(REFUSAL_READ_S):
            body = await response.read(64 * 1024)
    except (ModelAPIError, TimeoutError):
        body = b""
    finally:
        await response.aclose()
    status = f"{response.status} {response.reason}".strip()
    detail = _detail(body)
    if response.status == 401:
        challenge = response.headers.get("www-authenticate")
        return McpAuthRequired(
            f"authorization required: {url} answered {status}"
            + (f" (WWW-Authenticate: {challenge})" if challenge else "")
            + "; authorize it (mcp_authenticate) or give it a token in the entry's "
            "`headers`", challenge)
    return McpError(f"{url} answered {status}" + (f": {detail}" if detail else ""))


def _detail(body: bytes) -> str:
    """A JSON-RPC error's message when the body is one, else the start of the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return excerpt(" ".join(text.split()))


def excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def media_type(response: HTTPResponse) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def messages(data: str | bytes, url: str) -> list[JSON]:
    """The JSON-RPC messages of one body or event: one object, or a batch of them."""
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        how = "JSON nested too deeply" if isinstance(exc, RecursionError) else "not JSON-RPC"
        raise McpError(f"{url} sent something that is {how}: {excerpt(text)!r}") from None
    items = payload if isinstance(payload, list) else [payload]
    return [item for item in items if isinstance(item, dict)]


async def events(response: HTTPResponse) -> AsyncGenerator[SSEEvent, None]:
    """The events of an event-stream body; a failed read is an `McpError`."""
    decoder = SSEDecoder()
    try:
        async for batch in response.line_batches():
            for line in batch:
                event = decoder.feed(line)
                if event is not None:
                    yield event
    except ModelAPIError as exc:  # cut short, or silent for longer than the read timeout
        raise McpError(f"event stream failed: {exc}") from None
