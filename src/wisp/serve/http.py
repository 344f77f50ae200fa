"""A small asyncio HTTP/1.1 server for JSON APIs and Server-Sent Events (stdlib only).

    router = Router()
    router.add("GET", "/v1/sessions/{session_id}", get_session)
    router.add("GET", "/v1/sessions/{session_id}/events/stream", stream_events)
    server = Server(router, "127.0.0.1", 0, ApiKeys.from_env(os.environ))
    await server.start()                      # server.port: the bound port
    ...
    await server.close(drain_s=5.0)

    async def get_session(request: Request) -> Response:
        doc = store.get("session", request.owner, request.params["session_id"])
        if doc is None:
            raise HttpError(404, "not_found_error", "session not found")
        return Response(200, doc)

    async def stream_events(request: Request) -> EventStream:
        queue = hub.subscribe(request.params["session_id"])      # before any event is missed
        async def produce(out: SseWriter) -> None:
            while (event := await queue.get()) is not None:
                await out.send_json(event, event=event["type"], id=str(event["seq"]))
        return EventStream(produce, on_close=queue.unsubscribe)

API
  Request      method, path (decoded, no query), query (dict[str, list[str]], keys kept as
               given: `types=a&types=b` -> {"types": ["a", "b"]}, `created_at[gt]=x` ->
               {"created_at[gt]": ["x"]}), headers (lower-cased names), body (bytes),
               json() (HttpError 400 on bad JSON), params (from the route), client
               ((host, port) or None), owner (set by auth), request_id, keep_alive,
               segments (the percent-decoded path segments the router matched).
  Response(status=200, body=None, headers=None)   body: dict/list -> application/json,
               bytes -> as given (application/octet-stream unless headers say), None -> empty.
  EventStream(producer, *, headers=None, ping_s=None, on_close=None)   a `text/event-stream`
               answer: `await producer(writer)` runs in its own task; the stream ends when it
               returns. `on_close()` runs once afterwards whatever happened (even if the
               producer never started), for cleanup a handler set up before returning.
  SseWriter    send(data, event=None, id=None), send_json(obj, event=None, id=None),
               comment(text), disconnected, wait_disconnected(). Raises Disconnected once
               the client is gone.
  Router       add(method, "/v1/sessions/{session_id}/events", handler); unknown path 404,
               known path with another method 405 (with `allow`). Literal segments win over
               `{params}`; a param matches one non-empty, percent-decoded segment.
  HttpError(status, type, message, *, headers=None)   raised by a handler, answered as the
               Anthropic error shape {"type": "error", "error": {"type", "message"},
               "request_id"}. Anything else a handler raises is a 500 `api_error` with a
               generic message and the traceback on stderr.
  Server(router, host="127.0.0.1", port=0, auth=None, *, limits=Limits())   start(), port,
               url, close(drain_s). `auth` None means no keys (loopback only: see
               wisp.serve.auth.refuse_open, checked by start()).

Every response carries a `request-id` header. Authentication happens before routing, so a
client without a valid key learns nothing about which paths exist.

Wire choices
  Connections are kept alive (HTTP/1.1; HTTP/1.0 with `connection: keep-alive`); requests
  on one connection are served in order. JSON answers carry `content-length`. Streams use
  `transfer-encoding: chunked`, one chunk per event, and end with the zero-length chunk,
  so a client (httpx) tells a finished stream from a cut one (a cut one raises) and can
  reuse the connection. Each event is `event: E\\nid: I\\ndata: D\\n\\n`, a multi-line
  `data` split on CR/LF only into several `data:` lines. Pings are `: ping` comments,
  written when nothing else was for `ping_s`: the anthropic SDK's decoder skips them. The
  SDK also skips events without an `event:` line, so send one on every event it must see.
  While a stream is open the server reads the socket to notice the client leaving; then the
  producer task is cancelled (its `finally` blocks run) and `send` raises Disconnected.

Limits (see `Limits`): header block size (431), body size (413, refused before reading,
also under `Expect: 100-continue`), time to receive headers and body once a request has
begun (408), idle time between requests, and time a write may stay blocked on a client
that stopped reading. After an error that breaks framing the connection is closed,
lingering briefly to read what the client was still sending, so it sees the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, unquote

from wisp.serve.auth import ApiKeys, presented_key, refuse_open

__all__ = [
    "Disconnected",
    "EventStream",
    "Handler",
    "HttpError",
    "Limits",
    "Request",
    "Response",
    "Router",
    "Server",
    "SseWriter",
    "error_body",
    "format_event",
]

JSON = dict[str, Any] | list[Any]

# Made once: json.dumps with non-default options builds an encoder per call.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_ASCII_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"))
_REASONS = {status.value: status.phrase for status in HTTPStatus}
_INTERNAL = "Internal server error"


# Errors ---------------------------------------------------------------------------------


class HttpError(Exception):
    """An answer other than success: `type` is an Anthropic error type
    (invalid_request_error, authentication_error, permission_error, not_found_error,
    request_too_large, rate_limit_error, api_error, overloaded_error, …)."""

    def __init__(
        self, status: int, type: str, message: str, *, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.headers = dict(headers) if headers else {}


class Disconnected(ConnectionError):
    """The client of a stream went away; nothing more can be sent to it."""


class _Gone(Exception):
    """The client closed the connection mid-request: there is no one to answer."""


def error_body(type: str, message: str, request_id: str | None) -> JSON:
    """The body the anthropic SDK parses into APIStatusError (`.type`, `.api_message`)."""
    return {"type": "error", "error": {"type": type, "message": message}, "request_id": request_id}


def _bad_request(message: str) -> HttpError:
    return HttpError(400, "invalid_request_error", message)


# Request / responses --------------------------------------------------------------------

_UNSET: Any = object()


class Request:
    __slots__ = (
        "_json",
        "body",
        "client",
        "headers",
        "keep_alive",
        "method",
        "owner",
        "params",
        "path",
        "query",
        "request_id",
        "segments",
    )

    def __init__(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes = b"",
        *,
        segments: tuple[str, ...] = (),
        client: tuple[str, int] | None = None,
        keep_alive: bool = True,
        request_id: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.segments = segments  # the path's percent-decoded segments, for routing
        self.params: dict[str, str] = {}
        self.client = client
        self.owner = ""
        self.keep_alive = keep_alive
        self.request_id = request_id
        self._json: Any = _UNSET

    def json(self) -> Any:
        """The body parsed as JSON; HttpError 400 (invalid_request_error) when it is not."""
        if self._json is _UNSET:
            if not self.body:
                raise _bad_request("request body is empty; expected JSON")
            try:
                self._json = json.loads(self.body)
            except (ValueError, RecursionError) as exc:
                raise _bad_request(f"request body is not valid JSON: {exc}") from None
        return self._json

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.path} {self.request_id}>"


def _checked_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    # A CR or LF in a header would let a value write headers of its own; ASCII only, as
    # the head is encoded as Latin-1 and other text has no agreed meaning there.
    if not headers:
        return {}
    out: dict[str, str] = {}
    for name, value in headers.items():
        text = name + value
        if not text.isascii() or ":" in name or "\r" in text or "\n" in text:
            raise ValueError(f"invalid response header {name!r}: {value!r}")
        out[name.lower()] = value
    return out


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(
        self,
        status: int = 200,
        body: JSON | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = _checked_headers(headers)


class EventStream:
    __slots__ = ("headers", "on_close", "ping_s", "producer")

    def __init__(
        self,
        producer: Callable[[SseWriter], Awaitable[None]],
        *,
        headers: Mapping[str, str] | None = None,
        ping_s: float | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.producer = producer
        self.headers = _checked_headers(headers)
        self.ping_s = ping_s  # None: the server's Limits.ping_s; 0: no pings
        self.on_close = on_close


Handler = Callable[[Request], Awaitable[Response | EventStream]]


# Wire encoding --------------------------------------------------------------------------

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_date_cache: list[Any] = [0, ""]


def _http_date() -> str:
    # Formatted once a second, by hand (strftime's names follow the locale).
    now = int(time.time())
    if now != _date_cache[0]:
        t = time.gmtime(now)
        _date_cache[1] = (
            f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon]} {t.tm_year} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT"
        )
        _date_cache[0] = now
    return str(_date_cache[1])


def _head(status: int, headers: Mapping[str, str], keep_alive: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"]
    lines.extend(f"{name}: {value}\r\n" for name, value in headers.items())
    lines.append(f"date: {_http_date()}\r\nconnection: {'keep-alive' if keep_alive else 'close'}")
    lines.append("\r\n\r\n")
    return "".join(lines).encode("latin-1")


def _encode_response(response: Response, request_id: str, keep_alive: bool) -> bytes:
    body = response.body
    if body is None:
        payload, ctype = b"", None
    elif isinstance(body, bytes | bytearray):
        payload, ctype = bytes(body), "application/octet-stream"
    else:
        payload = _JSON_ENCODER.encode(body).encode()
        ctype = "application/json"
    headers = {"content-type": ctype} if ctype else {}
    for name, value in response.headers.items():
        if name not in _RESERVED:
            headers[name] = value
    if response.status in (204, 304):
        payload = b""  # no body, and no content-length either (RFC 9110 §8.6)
        headers.pop("content-type", None)
    else:
        headers["content-length"] = str(len(payload))
    headers["request-id"] = request_id
    return _head(response.status, headers, keep_alive) + payload


# The server frames the message itself; a handler's copies of these would contradict it.
_RESERVED = frozenset(("content-length", "transfer-encoding", "connection", "request-id", "date"))


def _error_response(err: HttpError, request_id: str) -> Response:
    return Response(err.status, error_body(err.type, err.message, request_id), err.headers)


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


_LAST_CHUNK = b"0\r\n\r\n"


# Streams --------------------------------------------------------------------------------


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
        await self._drain()

    async def _drain(self) -> None:
        try:
            await _drain(self._writer, self._timeout_s)
        except (ConnectionError, TimeoutError) as exc:
            self._mark_gone()
            raise Disconnected("the client stopped reading the stream") from exc

    def _mark_gone(self) -> None:
        self._gone.set()


async def _drain(writer: asyncio.StreamWriter, timeout_s: float) -> None:
    """Waits until `writer` can take more, at most `timeout_s` (TimeoutError)."""
    if writer.transport.get_write_buffer_size() == 0:
        # All of it went to the socket at once (the usual case): nothing to wait for, and
        # a timeout costs more than the rest of a small request.
        if writer.transport.is_closing():
            raise ConnectionResetError("connection lost")
        return
    async with asyncio.timeout(timeout_s):
        await writer.drain()


async def _watch_client(reader: asyncio.StreamReader, out: SseWriter) -> None:
    """Reads the socket while a stream is open, to notice the client leaving (EOF)."""
    try:
        while await reader.read(65536):
            out.tainted = True  # a pipelined request: we cannot answer it after the stream
    except (ConnectionError, OSError):
        pass
    out._mark_gone()


# Routing --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Route:
    pattern: str
    segments: tuple[tuple[str, bool], ...]  # (literal or param name, is_param)
    methods: dict[str, Handler]

    def bind(self, segments: tuple[str, ...]) -> dict[str, str] | None:
        params: dict[str, str] = {}
        for (want, is_param), got in zip(self.segments, segments, strict=True):
            if is_param:
                if not got:
                    return None
                params[want] = got
            elif want != got:
                return None
        return params


def _compile(pattern: str) -> tuple[tuple[str, bool], ...]:
    if not pattern.startswith("/"):
        raise ValueError(f"a route must start with '/': {pattern!r}")
    out: list[tuple[str, bool]] = []
    for seg in pattern.split("/")[1:]:
        if seg.startswith("{") and seg.endswith("}"):
            name = seg[1:-1]
            if not name.isidentifier() or any(name == prev for prev, p in out if p):
                raise ValueError(f"bad parameter {seg!r} in route {pattern!r}")
            out.append((name, True))
        elif "{" in seg or "}" in seg:
            raise ValueError(f"a parameter must be a whole segment: {pattern!r}")
        else:
            out.append((seg, False))
    return tuple(out)


def path_segments(raw_path: str) -> tuple[str, ...]:
    """The percent-decoded segments after the leading '/', decoded one by one so an
    encoded '/' (%2F) stays inside its segment."""
    parts = raw_path.split("/")[1:]
    if "%" in raw_path:
        return tuple(unquote(part) if "%" in part else part for part in parts)
    return tuple(parts)


class Router:
    def __init__(self) -> None:
        self._static: dict[tuple[str, ...], dict[str, Handler]] = {}
        self._dynamic: list[_Route] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        segments = _compile(pattern)
        if not any(is_param for _, is_param in segments):
            self._static.setdefault(tuple(seg for seg, _ in segments), {})[method] = handler
            return
        for route in self._dynamic:
            if route.segments == segments:
                route.methods[method] = handler
                return
        self._dynamic.append(_Route(pattern, segments, {method: handler}))
        # Literal segments win over params, position by position (".../events/stream"
        # before ".../events/{event_id}").
        self._dynamic.sort(key=lambda r: tuple(is_param for _, is_param in r.segments))

    def match(self, method: str, segments: tuple[str, ...]) -> tuple[Handler, dict[str, str]]:
        """The handler and params for a request; HttpError 404 or 405 when there is none."""
        allowed: set[str] = set()
        methods = self._static.get(segments)
        if methods is not None:
            if (handler := methods.get(method)) is not None:
                return handler, {}
            allowed.update(methods)
        for route in self._dynamic:
            if len(route.segments) != len(segments):
                continue
            params = route.bind(segments)
            if params is None:
                continue
            if (handler := route.methods.get(method)) is not None:
                return handler, params
            allowed.update(route.methods)
        path = "/" + "/".join(segments)
        if allowed:
            raise HttpError(
                405,
                "invalid_request_error",
                f"method {method} is not allowed for {path}",
                headers={"allow": ", ".join(sorted(allowed))},
            )
        raise HttpError(404, "not_found_error", f"no such resource: {method} {path}")


# Parsing --------------------------------------------------------------------------------


def _parse_headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        # No folded lines, no space before the colon (RFC 9112 §5.1: reject, not guess).
        if not sep or not name or name[0] in " \t" or name[-1] in " \t":
            raise _bad_request("malformed header line")
        name = name.lower()
        value = value.strip(" \t")
        prev = headers.get(name)
        headers[name] = value if prev is None else f"{prev}, {value}"
    return headers


def parse_head(head: bytes, max_query_fields: int = 1000) -> Request:
    """A Request (without body, client, id) from the bytes up to the blank line."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise _bad_request("malformed request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505, "invalid_request_error", f"unsupported protocol {version!r}")
    if not target.startswith("/"):
        raise _bad_request("the request target must be a path")
    headers = _parse_headers(lines[1:])
    raw_path, _, qs = target.partition("?")
    try:
        query = parse_qs(qs, keep_blank_values=True, max_num_fields=max_query_fields) if qs else {}
    except ValueError as exc:
        raise _bad_request(f"bad query string: {exc}") from None
    conn = headers.get("connection", "").lower()
    keep = "close" not in conn if version == "HTTP/1.1" else "keep-alive" in conn
    return Request(
        method,
        unquote(raw_path) if "%" in raw_path else raw_path,
        query,
        headers,
        segments=path_segments(raw_path),
        keep_alive=keep,
    )


def _content_length(value: str) -> int:
    if not (value.isascii() and value.isdigit()):
        raise _bad_request("bad content-length")
    return int(value)


def _chunk_size(line: bytes) -> int:
    text = line[:-2].split(b";", 1)[0].strip()
    if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
        raise _bad_request("bad chunk size")
    return int(text, 16)


# Server ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    max_header_bytes: int = 64 * 1024
    max_body_bytes: int = 32 * 1024 * 1024
    max_query_fields: int = 1000
    header_timeout_s: float = 10.0  # from a request's first byte to its blank line
    body_timeout_s: float = 60.0  # for the whole body
    idle_timeout_s: float = 60.0  # a kept-alive connection with no request
    write_timeout_s: float = 30.0  # a write blocked on a client that does not read
    ping_s: float = 15.0  # SSE `: ping` after this long without a write; 0: none
    linger_s: float = 2.0  # reading what a refused client still sends before closing


class _Conn:
    __slots__ = ("idle", "peer", "reader", "stream_task", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer: tuple[str, int] | None = (peer[0], peer[1]) if peer else None
        self.idle = False  # waiting for a request's first byte: safe to close at shutdown
        self.stream_task: asyncio.Task[None] | None = None


def _request_id() -> str:
    return "req_" + secrets.token_hex(12)


def _log_exception(what: str) -> None:
    print(f"wisp serve: {what}", file=sys.stderr)
    traceback.print_exc(file=sys.stderr)


class Server:
    def __init__(
        self,
        router: Router,
        host: str = "127.0.0.1",
        port: int = 0,
        auth: ApiKeys | None = None,
        *,
        limits: Limits | None = None,
    ) -> None:
        self.router = router
        self.host = host
        self.auth = auth if auth is not None else ApiKeys()
        self.limits = limits or Limits()
        self._port = port
        self._server: asyncio.Server | None = None
        self._conns: dict[asyncio.Task[None], _Conn] = {}
        self._closing = False

    @property
    def port(self) -> int:
        """The bound port (the one chosen by the OS when asked for 0)."""
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    @property
    def connections(self) -> int:
        return len(self._conns)

    async def start(self) -> None:
        """Binds and starts accepting. UsageError for a public host without keys."""
        refuse_open(self.host, self.auth)
        self._server = await asyncio.start_server(
            self._accept,
            self.host,
            self._port,
            limit=self.limits.max_header_bytes,
            backlog=1024,  # bursts of hundreds of clients connecting at once
        )
        # With "localhost" there may be a socket per address family; the first one names it.
        self._port = self._server.sockets[0].getsockname()[1]

    async def close(self, drain_s: float = 5.0) -> None:
        """Stops accepting; ends open streams (cleanly, with the last chunk) and idle
        connections now; lets requests in flight finish for up to `drain_s`, then cuts."""
        if self._server is None:
            return
        self._closing = True
        self._server.close()
        for task, conn in list(self._conns.items()):
            if conn.idle:
                task.cancel()
            elif conn.stream_task is not None:
                conn.stream_task.cancel()
        if self._conns:
            await asyncio.wait(list(self._conns), timeout=drain_s)
        if self._conns:
            for task in self._conns:
                task.cancel()
            await asyncio.wait(list(self._conns), timeout=1.0)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await self._server.wait_closed()
        self._server = None

    # Connections ------------------------------------------------------------------------

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback starting our own task, so close() can find and cancel it.
        if self._closing:
            writer.close()
            return
        conn = _Conn(reader, writer)
        task = asyncio.get_running_loop().create_task(self._serve(conn))
        self._conns[task] = conn
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._conns.pop(task, None)

    async def _serve(self, conn: _Conn) -> None:
        try:
            while not self._closing and await self._one(conn):
                pass
        except asyncio.CancelledError:
            pass  # close() after its drain time: drop the connection
        except Exception:
            _log_exception("connection failed")
        finally:
            await _close_writer(conn.writer)

    async def _one(self, conn: _Conn) -> bool:
        """Serves one request; True when the connection may carry another."""
        request_id = _request_id()
        try:
            head = await self._read_head(conn)
            if head is None:
                return False
            request = parse_head(head, self.limits.max_query_fields)
            request.request_id = request_id
            request.client = conn.peer
            request.body = await self._read_body(conn, request)
        except _Gone:
            return False
        except HttpError as err:
            await self._refuse(conn, err, request_id)
            return False
        return await self._dispatch(conn, request)

    async def _read_head(self, conn: _Conn) -> bytes | None:
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

    async def _head_bytes(self, conn: _Conn) -> tuple[bytes, bytes]:
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

    async def _read_body(self, conn: _Conn, request: Request) -> bytes:
        headers = request.headers
        te = headers.get("transfer-encoding")
        cl = headers.get("content-length")
        if te is not None:
            if cl is not None or te.lower() != "chunked":
                raise _bad_request("unsupported transfer-encoding / content-length")
            self._continue(conn, headers)
            return await self._timed_body(self._read_chunked(conn.reader))
        if cl is None:
            return b""
        size = _content_length(cl)
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
            raise _bad_request("chunk header line too long") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            raise _Gone from None

    async def _read_chunked(self, reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        total = 0
        while size := _chunk_size(await reader.readuntil(b"\r\n")):
            total += size
            if total > self.limits.max_body_bytes:
                raise self._too_large()
            parts.append(await reader.readexactly(size))
            if await reader.readexactly(2) != b"\r\n":
                raise _bad_request("bad chunk framing")
        while await reader.readuntil(b"\r\n") != b"\r\n":
            pass  # trailer fields: not used
        return b"".join(parts)

    def _too_large(self) -> HttpError:
        limit = self.limits.max_body_bytes
        return HttpError(413, "request_too_large", f"request body exceeds {limit} bytes")

    @staticmethod
    def _continue(conn: _Conn, headers: dict[str, str]) -> None:
        if headers.get("expect", "").lower() == "100-continue":
            conn.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    async def _refuse(self, conn: _Conn, err: HttpError, request_id: str) -> None:
        """Answers a request that broke framing, then closes: lingering to read what the
        client still sends, since closing with unread data resets the connection and the
        client may lose the answer."""
        conn.writer.write(_encode_response(_error_response(err, request_id), request_id, False))
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            async with asyncio.timeout(self.limits.linger_s):
                await conn.writer.drain()
                if conn.writer.can_write_eof():
                    conn.writer.write_eof()
                while await conn.reader.read(65536):
                    pass

    # Dispatch ---------------------------------------------------------------------------

    async def _dispatch(self, conn: _Conn, request: Request) -> bool:
        result = await self._handle(request)
        if isinstance(result, EventStream):
            return await self._stream(conn, request, result)
        keep = request.keep_alive and not self._closing
        try:
            data = _encode_response(result, request.request_id, keep)
        except Exception:  # a body JSON cannot encode (a datetime, a set, …): a handler bug
            _log_exception(f"{request.method} {request.path} ({request.request_id}) failed")
            rid = request.request_id
            internal = _error_response(HttpError(500, "api_error", _INTERNAL), rid)
            data = _encode_response(internal, rid, keep)
        conn.writer.write(data)
        try:
            await _drain(conn.writer, self.limits.write_timeout_s)
        except (ConnectionError, TimeoutError):
            return False
        return keep

    async def _handle(self, request: Request) -> Response | EventStream:
        try:
            owner = self.auth.owner_of(request.headers)
            if owner is None:
                raise _unauthenticated(request)
            request.owner = owner
            handler, request.params = self.router.match(request.method, request.segments)
            result = await handler(request)
            if not isinstance(result, Response | EventStream):
                raise TypeError(f"a handler returned {type(result).__name__}")
            return result
        except HttpError as err:
            return _error_response(err, request.request_id)
        except Exception:
            _log_exception(f"{request.method} {request.path} ({request.request_id}) failed")
            return _error_response(HttpError(500, "api_error", _INTERNAL), request.request_id)

    async def _stream(self, conn: _Conn, request: Request, stream: EventStream) -> bool:
        try:
            return await self._run_stream(conn, request, stream)
        finally:
            if stream.on_close is not None:
                try:
                    stream.on_close()
                except Exception:
                    _log_exception(f"on_close of {request.path} failed")

    async def _run_stream(self, conn: _Conn, request: Request, stream: EventStream) -> bool:
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",  # proxies (nginx) must not hold events back
            **{k: v for k, v in stream.headers.items() if k not in _RESERVED},
            "transfer-encoding": "chunked",
            "request-id": request.request_id,
        }
        out = SseWriter(conn.writer, self.limits.write_timeout_s)
        conn.writer.write(_head(200, headers, request.keep_alive))
        try:
            await out._drain()
        except Disconnected:
            return False
        loop = asyncio.get_running_loop()
        producer = loop.create_task(self._produce(stream, out, request))
        watcher = loop.create_task(_watch_client(conn.reader, out))
        conn.stream_task = producer
        if self._closing:
            producer.cancel()
        try:
            ping_s = self.limits.ping_s if stream.ping_s is None else stream.ping_s
            await _pump(producer, watcher, out, ping_s)
        finally:
            conn.stream_task = None
            producer.cancel()
            watcher.cancel()
            await asyncio.wait((producer, watcher))
        if out.disconnected:
            return False
        conn.writer.write(_LAST_CHUNK)
        try:
            await out._drain()
        except Disconnected:
            return False
        return request.keep_alive and not out.tainted and not self._closing

    async def _produce(self, stream: EventStream, out: SseWriter, request: Request) -> None:
        """Runs the producer; an error it raises goes to the client as an `error` event
        (which the SDK raises as APIStatusError) before the stream ends."""
        try:
            await stream.producer(out)
            return
        except Disconnected:
            return
        except HttpError as err:
            body = error_body(err.type, err.message, request.request_id)
        except Exception:
            _log_exception(f"stream {request.path} ({request.request_id}) failed")
            body = error_body("api_error", _INTERNAL, request.request_id)
        with contextlib.suppress(Disconnected):
            await out.send_json(body, event="error")


async def _pump(
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


def _unauthenticated(request: Request) -> HttpError:
    if presented_key(request.headers) is None:
        message = "x-api-key header is required"
    else:
        message = "invalid x-api-key"
    return HttpError(401, "authentication_error", message)


async def _close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        async with asyncio.timeout(1.0):
            await writer.wait_closed()
    except (TimeoutError, ConnectionError, OSError):
        writer.transport.abort()  # a peer that never reads must not hold the close
    except asyncio.CancelledError:
        writer.transport.abort()
        raise
