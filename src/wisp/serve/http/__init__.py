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
               bytes -> as given (application/octet-stream unless headers say), None -> empty,
               FileBody(path, size, content_type) -> the file, sent a piece at a time.
  EventStream(producer, *, headers=None, ping_s=None, on_close=None)   a `text/event-stream`
               answer: `await producer(writer)` runs in its own task; the stream ends when it
               returns. `on_close()` runs once afterwards whatever happened (even if the
               producer never started), for cleanup a handler set up before returning.
  SseWriter    send(data, event=None, id=None), send_json(obj, event=None, id=None),
               comment(text), disconnected, wait_disconnected(). Raises Disconnected once
               the client is gone.
  Router       add(method, "/v1/sessions/{session_id}/events", handler, stream_body=False);
               with stream_body the body is left unread for the handler to read from
               `request.body_stream.chunks()` (up to Limits.max_upload_bytes); unknown path 404,
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

Modules, each importing only those above it:
  sse       SseWriter, format_event, the chunked framing of a stream
  messages  Request, Response, EventStream, HttpError, error_body
  router    Router and the splitting of a path into segments
  parse     the request head, content-length and chunk sizes
  body      BodyStream (a request body read as it arrives), FileBody (a file answer)
  encode    the response head and a whole answer's bytes
  reading   Limits, RequestReader: a request's head and body read within the limits
  server    Server: connections, dispatch, streams
Import from this package: where a name lives inside it may change.
"""

from __future__ import annotations

from wisp.serve.http.body import BodyStream, FileBody
from wisp.serve.http.messages import EventStream, Handler, HttpError, Request, Response, error_body
from wisp.serve.http.reading import Limits
from wisp.serve.http.router import Router
from wisp.serve.http.server import Server
from wisp.serve.http.sse import Disconnected, SseWriter, format_event

__all__ = [
    "BodyStream",
    "Disconnected",
    "EventStream",
    "FileBody",
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
