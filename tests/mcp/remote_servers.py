"""Remote MCP servers for the tests, each on its own 127.0.0.1 port (port 0: the kernel
picks a free one), served by uvicorn in a thread of the test process.

`remote_app` is a server built on the real `mcp` package, as third-party servers are,
with two tools: `add`, and `echo_header`, which returns a header of the request that
called it (so a test sees what headers reached the server). `canned_app` answers every
request the same way (a 401 with `WWW-Authenticate`, a 500, a page of HTML). Every
request is logged (method, path, headers) in `Served.log`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def remote_app(kind: str, *, json_response: bool = False) -> App:
    """The `mcp` package's streamable HTTP app (at /mcp) or SSE app (at /sse)."""
    from tests.mcp.remote_tools import build

    app: App = build(kind, json_response)
    return app


def canned_app(status: int, headers: dict[str, str], body: bytes) -> App:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in headers.items()]})
        await send({"type": "http.response.body", "body": body})

    return app


def moved(app: App, old: str, location: str) -> App:
    """`app`, except that a request for the path `old` is redirected (307) to `location`."""
    async def wrapper(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == old:
            await send({"type": "http.response.start", "status": 307,
                        "headers": [(b"location", location.encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return wrapper


def scripted_http_app() -> App:
    """A hand-written streamable HTTP server: answers in JSON, except `tools/call` of
    `grow`, answered in an event stream that first asks wisp two things (`ping`, and
    `roots/list`, which wisp does not offer) and says the tool list changed (it now has
    `extra`)."""
    tools = [{"name": "grow", "inputSchema": {"type": "object"}}]

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        if method == "initialize":
            result: dict[str, Any] = {"protocolVersion": "2025-03-26", "capabilities": {},
                                      "serverInfo": {"name": "scripted", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": tools}
        else:
            tools.append({"name": "extra", "inputSchema": {"type": "object"}})
            result = {"content": [{"type": "text", "text": "grown"}]}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _request_body(receive)
        message = json.loads(body) if body else {}
        if "id" not in message or "method" not in message:  # notifications and replies
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        reply = json.dumps(answer(message)).encode()
        if message.get("params", {}).get("name") != "grow":
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/json"), (b"mcp-session-id", b"s-1")]})
            await send({"type": "http.response.body", "body": reply})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for data in (b'{"jsonrpc":"2.0","id":"srv-1","method":"ping"}',
                     b'{"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage"}',
                     b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
                     reply):
            await send({"type": "http.response.body", "body": b"event: message\ndata: "
                        + data + b"\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


async def _request_body(receive: Receive) -> bytes:
    body = b""
    while True:
        part = await receive()
        body += part.get("body", b"")
        if not part.get("more_body"):
            return body


def endpoint_app(endpoint: str) -> App:
    """A legacy SSE server whose stream names `endpoint` and then stays open."""
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "more_body": True,
                    "body": f"event: endpoint\ndata: {endpoint}\n\n".encode()})
        while (await receive())["type"] != "http.disconnect":
            pass

    return app


class Served:
    """An ASGI app served on 127.0.0.1 in a thread; `log` holds each request's method,
    path and headers (lower-case names)."""

    def __init__(self, app: App) -> None:
        import uvicorn

        logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines per session

        self.log: list[tuple[str, str, dict[str, str]]] = []
        self.posted: list[Any] = []  # the JSON bodies of POSTs, once each has arrived

        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.log.append((scope["method"], scope["path"], headers))
            body = bytearray()

            async def reading() -> MutableMapping[str, Any]:
                message = await receive()
                if message["type"] == "http.request":
                    body.extend(message.get("body", b""))
                    if not message.get("more_body") and scope["method"] == "POST":
                        try:
                            self.posted.append(json.loads(body))
                        except ValueError:  # a form (an OAuth token request)
                            self.posted.append(bytes(body))
                return message

            await app(scope, reading, send)

        config = uvicorn.Config(logged, host="127.0.0.1", port=0, log_level="error",
                                lifespan="auto", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test MCP server did not start")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def rpc_methods(self) -> list[str]:
        """The JSON-RPC methods POSTed so far (answers to the server have none)."""
        return [m.get("method", "") for m in self.posted if isinstance(m, dict)]

    def methods(self) -> list[str]:
        return [method for method, _, _ in self.log]

    def stop(self) -> None:
        self._server.should_exit = True  # open streams are cut after the graceful second
        self._thread.join(10)


@contextmanager
def served(app: App) -> Iterator[Served]:
    server = Served(app)
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def refused_url() -> Iterator[str]:
    """A 127.0.0.1 URL that refuses connections: its port is bound (so nobody else takes
    it) but not listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


@contextmanager
def silent_port() -> Iterator[str]:
    """A 127.0.0.1 URL that accepts connections (the kernel does) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def run(coro: Awaitable[Any]) -> Any:
    """Runs `coro` and checks that it left no task behind."""
    async def checked() -> Any:
        result = await coro
        for _ in range(5):  # the loop's own finalizers of closed generators run as tasks
            await asyncio.sleep(0)
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert left == [], left
        return result

    return asyncio.run(checked())
