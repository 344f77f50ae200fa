"""The Server: accepting connections, reading requests (`wisp.serve.http.reading`, within
the Limits), dispatching them to the router's handlers and writing the answers, streams
included."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import sys
import traceback

from wisp.serve.auth import ApiKeys, presented_key, refuse_open
from wisp.serve.http.body import CHUNK, FileBody
from wisp.serve.http.encode import RESERVED_HEADERS, encode_response, error_response, response_head
from wisp.serve.http.messages import EventStream, HttpError, Request, Response, error_body
from wisp.serve.http.parse import parse_head
from wisp.serve.http.reading import Connection, Gone, Limits, RequestReader
from wisp.serve.http.router import Router
from wisp.serve.http.sse import LAST_CHUNK, Disconnected, SseWriter, drain, pump, watch_client

_INTERNAL = "Internal server error"


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
        self.reading = RequestReader(self.limits)
        self._port = port
        self._server: asyncio.Server | None = None
        self._conns: dict[asyncio.Task[None], Connection] = {}
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
        conn = Connection(reader, writer)
        task = asyncio.get_running_loop().create_task(self._serve(conn))
        self._conns[task] = conn
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._conns.pop(task, None)

    async def _serve(self, conn: Connection) -> None:
        try:
            while not self._closing and await self._one(conn):
                pass
        except asyncio.CancelledError:
            pass  # close() after its drain time: drop the connection
        except Exception:
            _log_exception("connection failed")
        finally:
            await _close_writer(conn.writer)

    async def _one(self, conn: Connection) -> bool:
        """Serves one request; True when the connection may carry another."""
        request_id = _request_id()
        try:
            head = await self.reading.read_head(conn)
            if head is None:
                return False
            request = parse_head(head, self.limits.max_query_fields)
            request.request_id = request_id
            request.client = conn.peer
            if self.router.streams_body(request.method, request.segments):
                request.body_stream = self.reading.body_stream(conn, request)
            else:
                request.body = await self.reading.read_body(conn, request)
        except Gone:
            return False
        except HttpError as err:
            await self._refuse(conn, err, request_id)
            return False
        return await self._dispatch(conn, request)

    async def _refuse(self, conn: Connection, err: HttpError, request_id: str) -> None:
        """Answers a request that broke framing, then closes: lingering to read what the
        client still sends, since closing with unread data resets the connection and the
        client may lose the answer."""
        conn.writer.write(encode_response(error_response(err, request_id), request_id, False))
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            async with asyncio.timeout(self.limits.linger_s):
                await conn.writer.drain()
                if conn.writer.can_write_eof():
                    conn.writer.write_eof()
                while await conn.reader.read(65536):
                    pass

    # Dispatch ---------------------------------------------------------------------------

    async def _dispatch(self, conn: Connection, request: Request) -> bool:
        result = await self._handle(request)
        if isinstance(result, EventStream):
            return await self._stream(conn, request, result)
        unread = request.body_stream is not None and not request.body_stream.done
        keep = request.keep_alive and not self._closing and not unread
        if isinstance(result.body, FileBody):
            return await self._send_file(conn, request, result, result.body, keep)
        try:
            data = encode_response(result, request.request_id, keep)
        except Exception:  # a body JSON cannot encode (a datetime, a set, …): a handler bug
            _log_exception(f"{request.method} {request.path} ({request.request_id}) failed")
            rid = request.request_id
            internal = error_response(HttpError(500, "api_error", _INTERNAL), rid)
            data = encode_response(internal, rid, keep)
        if unread:  # a streamed body the handler refused part-way: answer, then close
            await self._refuse_after(conn, data)
            return False
        conn.writer.write(data)
        try:
            await drain(conn.writer, self.limits.write_timeout_s)
        except (ConnectionError, TimeoutError):
            return False
        return keep

    async def _refuse_after(self, conn: Connection, data: bytes) -> None:
        conn.writer.write(data)
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            async with asyncio.timeout(self.limits.linger_s):
                await conn.writer.drain()
                if conn.writer.can_write_eof():
                    conn.writer.write_eof()
                while await conn.reader.read(65536):
                    pass

    async def _send_file(self, conn: Connection, request: Request, response: Response,
                         body: FileBody, keep: bool) -> bool:
        """A file body, read and written a piece at a time (never whole in memory)."""
        headers = {"content-type": body.content_type,
                   **{k: v for k, v in response.headers.items() if k not in RESERVED_HEADERS},
                   "content-length": str(body.size), "request-id": request.request_id}
        conn.writer.write(response_head(response.status, headers, keep))
        try:
            with body.path.open("rb") as source:
                sent = 0
                while sent < body.size:
                    piece = await asyncio.to_thread(source.read, min(CHUNK, body.size - sent))
                    if not piece:
                        return False  # shorter than announced: the client sees a cut body
                    conn.writer.write(piece)
                    sent += len(piece)
                    await drain(conn.writer, self.limits.write_timeout_s)
        except (ConnectionError, TimeoutError, OSError):
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
            return error_response(err, request.request_id)
        except Exception:
            _log_exception(f"{request.method} {request.path} ({request.request_id}) failed")
            return error_response(HttpError(500, "api_error", _INTERNAL), request.request_id)

    async def _stream(self, conn: Connection, request: Request, stream: EventStream) -> bool:
        try:
            return await self._run_stream(conn, request, stream)
        finally:
            if stream.on_close is not None:
                try:
                    stream.on_close()
                except Exception:
                    _log_exception(f"on_close of {request.path} failed")

    async def _run_stream(self, conn: Connection, request: Request, stream: EventStream) -> bool:
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",  # proxies (nginx) must not hold events back
            **{k: v for k, v in stream.headers.items() if k not in RESERVED_HEADERS},
            "transfer-encoding": "chunked",
            "request-id": request.request_id,
        }
        out = SseWriter(conn.writer, self.limits.write_timeout_s)
        conn.writer.write(response_head(200, headers, request.keep_alive))
        try:
            await out.drain()
        except Disconnected:
            return False
        loop = asyncio.get_running_loop()
        producer = loop.create_task(self._produce(stream, out, request))
        watcher = loop.create_task(watch_client(conn.reader, out))
        conn.stream_task = producer
        if self._closing:
            producer.cancel()
        try:
            ping_s = self.limits.ping_s if stream.ping_s is None else stream.ping_s
            await pump(producer, watcher, out, ping_s)
        finally:
            conn.stream_task = None
            producer.cancel()
            watcher.cancel()
            await asyncio.wait((producer, watcher))
        if out.disconnected:
            return False
        conn.writer.write(LAST_CHUNK)
        try:
            await out.drain()
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
