"""A scripted Messages API (and Chat Completions API) server on 127.0.0.1, for testing
agents over real sockets.

    with ScriptedServer(reply.text("hello")) as server:
        run_agent(base_url=server.url)  # or an OpenAI client at server.openai_url
        assert server.requests[0].body["messages"][-1]["role"] == "user"

Above: a test (or `python -m wisp.testing.server`) scripts replies and inspects requests.
Below: `http.server.ThreadingHTTPServer` on a daemon thread, one thread per connection.
Streams use `Transfer-Encoding: chunked` with one chunk per SSE event, written as soon as
it is ready, as the real API does. Connections are kept alive between requests (HTTP/1.1),
except after a cut reply; each request records which connection it came on. It answers
what the reference CLI was seen to call: `POST /v1/messages`, `POST
/v1/messages/count_tokens`, `HEAD /`, `HEAD /api/hello`, and 200 `{}` for anything else.
It also answers what an OpenAI client calls: `POST /v1/chat/completions` (the same replies,
from the same queue, translated by `wisp.testing.openai_wire`) and `GET /v1/models` (a
model list, unless the request carries Anthropic's `x-api-key` or `anthropic-version`:
then `{}` as before). Paths match by suffix, so a gateway prefix works. Requests are not
validated (`role: "system"` messages pass).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.testing import openai_wire
from wisp.testing.reply import (
    EXHAUSTED,
    Headers,
    Outgoing,
    Reply,
    Served,
    http_chunk,
    serve,
    sse_payload,
)

if TYPE_CHECKING:
    import ssl

__all__ = ["RecordedRequest", "ScriptedServer"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # with the query string
    headers: dict[str, str]  # lower-cased names
    body: JSON | None  # None when the body is empty or not JSON
    # Which TCP connection carried it: numbered from 1 in accept order, and the client's
    # port. Equal numbers mean a kept-alive connection was reused. Not part of equality.
    connection: int = field(default=0, compare=False)
    client_port: int = field(default=0, compare=False)


class ScriptedServer:
    """Serves scripted replies, in order, to `POST /v1/messages` and `POST
    /v1/chat/completions` (one queue, whatever the route). Starts on construction.
    `models` lists the ids `GET /v1/models` names first, before those seen in requests.
    With `tls` (a server-side context holding a certificate) it speaks HTTPS."""

    def __init__(
        self,
        *replies: Reply,
        default: Reply | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
        models: tuple[str, ...] = ("wisp-test",),
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.default = default
        self.verbose = verbose
        self.models = models
        self._cond = threading.Condition()
        self._replies: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._accepted = 0
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler, self)
        self._scheme = "http" if tls is None else "https"
        if tls is not None:  # handshakes as it accepts, so each connection is TLS from the start
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        # A short poll interval keeps close() fast; serve_forever only checks it between polls.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="wisp-scripted-server",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL an OpenAI client expects (it appends `/chat/completions`)."""
        return f"{self.url}/v1"

    def script(self, *replies: Reply) -> ScriptedServer:
        """Queue more replies after those already scripted."""
        with self._cond:
            self._replies.extend(replies)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order, whatever its path (a copy)."""
        with self._cond:
            return list(self._requests)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests have arrived; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests, got {len(self._requests)}")
            return list(self._requests)

    @property
    def connections_accepted(self) -> int:
        """How many TCP connections clients opened so far."""
        with self._cond:
            return self._accepted

    def drop_connections(self) -> None:
        """Close every client connection now, as a server closing idle keep-alive
        connections does (a response in progress is cut). New connections are served."""
        with self._cond:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()  # wakes handlers sleeping inside slow replies
        self._httpd.shutdown()
        self._httpd.server_close()
        self.drop_connections()  # idle keep-alive connections would park their threads
        self._thread.join()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(request)
            self._cond.notify_all()

    def _model_ids(self) -> list[str]:
        """`models`, then every other model requests named so far, in order."""
        with self._cond:
            seen = [r.body.get("model") for r in self._requests if isinstance(r.body, dict)]
        return list(dict.fromkeys([*self.models, *(m for m in seen if isinstance(m, str))]))

    def _next_reply(self) -> Reply:
        with self._cond:
            if self._replies:
                return self._replies.popleft()
        return self.default or EXHAUSTED

    def _track(self, conn: socket.socket, add: bool) -> int:
        """Start or stop tracking a connection; returns its number when it starts."""
        with self._cond:
            if add:
                self._connections.add(conn)
                self._accepted += 1
            else:
                self._connections.discard(conn)
            return self._accepted


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: a hundred sessions connecting at once would see
    # dropped SYNs and stall a second or more before retrying.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: Any, scripted: ScriptedServer) -> None:
        self.scripted = scripted
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-stream is routine here (interrupt tests); stay quiet.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Each SSE chunk must leave at once rather than wait for the ACK of the previous one.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.number = self.server.scripted._track(self.connection, add=True)

    def finish(self) -> None:
        self.server.scripted._track(self.connection, add=False)
        with contextlib.suppress(OSError):
            super().finish()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        port = int(self.client_address[1])
        recorded = RecordedRequest(self.command, self.path, headers, body, self.number, port)
        self.server.scripted._record(recorded)
        try:
            self._send(self._route(body, len(raw), headers))
        except ConnectionError:
            self.close_connection = True

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.scripted.verbose:
            super().log_message(format, *args)

    def _route(self, body: JSON | None, size: int, headers: dict[str, str]) -> Outgoing:
        """What to answer. Suffix match: a base URL with a gateway prefix
        (/proxy/v1/messages) works too."""
        route = self.path.partition("?")[0].rstrip("/")
        post = self.command == "POST"
        if route.endswith("/v1/messages") and post:
            served = self._serve(body, size, chat=False)
            request_id = ("request-id", "req_" + secrets.token_hex(12))
            return _messages(served, body, (request_id, *served.headers))
        if route.endswith("/v1/chat/completions") and post:
            served = self._serve(body, size, chat=True)
            request_id = ("x-request-id", "req_" + secrets.token_hex(12))
            return openai_wire.respond(served, body or {}, (request_id,))
        if route.endswith("/v1/messages/count_tokens"):
            return Outgoing.of_json(200, {"input_tokens": size // 4})
        if self.command == "GET" and _is_openai_models(route, headers):
            return Outgoing.of_json(200, _models(route, self.server.scripted._model_ids()))
        return Outgoing.of_json(200, {} if self.command != "HEAD" else None)

    def _serve(self, body: JSON | None, size: int, chat: bool) -> Served:
        # A body that is not an object takes no scripted reply (serve answers it 400).
        chosen = self.server.scripted._next_reply() if isinstance(body, dict) else EXHAUSTED
        return serve(chosen, body, size, chat=chat)

    def _send(self, out: Outgoing) -> None:
        self.send_response(out.status)
        self.send_header("content-type", out.content_type)
        if out.chunked:
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(sum(map(len, out.pieces))))
        for name, value in out.headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and not self._write_body(out):
            self.close_connection = True  # no proper end: the client sees the body cut

    def _write_body(self, out: Outgoing) -> bool:
        """Write the pieces one by one; False when the connection must be dropped (a cut,
        a body left unterminated on purpose, or the server closing mid-delay)."""
        stopping = self.server.scripted._stopping
        for index, piece in enumerate(out.pieces):
            if index and out.delay > 0 and stopping.wait(out.delay):
                return False  # the server is closing: abandon the stream
            data = http_chunk(piece) if out.chunked else piece
            if index == out.cut_at:
                self.wfile.write(data[: len(data) // 2])  # leave the client mid-chunk
                return False
            self.wfile.write(data)
        if out.stall > 0 and stopping.wait(out.stall):
            return False
        if not out.terminate:
            return False
        if out.chunked:
            self.wfile.write(b"0\r\n\r\n")
        return True


def _messages(served: Served, body: JSON | None, headers: Headers) -> Outgoing:
    """The Messages API answer: an error, the whole message (no `stream: true`), or SSE."""
    if served.json_body is not None:
        return Outgoing.of_json(served.status, served.json_body, headers)
    if body is not None and not body.get("stream") and (folded := _fold(served)):
        return Outgoing.of_json(200, folded, headers)
    payloads = [sse_payload(name, data) for name, data in served.events]
    return Outgoing.of_sse(payloads, served, headers, served.cut_after)


def _is_openai_models(route: str, headers: dict[str, str]) -> bool:
    """`GET /v1/models[/<id>]` from an OpenAI client: Anthropic's clients send their own
    headers and keep getting `{}`, as the reference CLI was seen to."""
    listing = route.endswith("/v1/models") or "/v1/models/" in route
    return listing and "x-api-key" not in headers and "anthropic-version" not in headers


def _models(route: str, ids: list[str]) -> JSON:
    """The model list, or one model (`/v1/models/<id>`, any id is known)."""
    def model(id: str) -> JSON:
        return {"id": id, "object": "model", "created": 0, "owned_by": "wisp-testing"}

    _, _, wanted = route.partition("/v1/models/")
    return model(wanted) if wanted else {"object": "list", "data": [model(i) for i in ids]}


def _fold(served: Served) -> JSON | None:
    """The whole message, for a request without `stream: true` (as the CLI's model probe)."""
    from wisp.models.accumulate import fold

    if served.cut_after is not None or any(name == "error" for name, _ in served.events):
        return None
    try:
        return fold(json.loads(data) for _, data in served.events)
    except Exception:
        return None  # not foldable (malformed or error streams): send it as SSE instead


if __name__ == "__main__":
    from wisp.testing._cli import main

    raise SystemExit(main())
