"""Correlates control requests and responses by request_id, in both directions.

Above: typed handlers (inbound requests) and callers such as the permission prompt
(outbound requests). Below: a frame sink (stdout) and the stdin reader, which hands every
`control_*` frame to `receive`. This module knows payloads only through their
`RequestType` (`wisp.wire.protocol`): a request is checked against it before its handler
runs, and one that fails is answered with an error naming the field. This is the one place
where an exception becomes a wire error.

Outbound: `request()` registers the pending future *before* writing, so a fast answer can't
race it. A response for an id nobody waits for is kept (at most 1024, oldest evicted) in
case its request is registered later. `control_cancel_request` withdraws a request in
either direction; no response is owed for it. At EOF every pending request fails locally.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from wisp.control.pending import PendingRequests
from wisp.diagnostics import warn
from wisp.errors import ChannelClosed, ControlError, ProtocolError, RequestFailed
from wisp.jsontypes import JSON
from wisp.wire.protocol import (
    ErrorResponse,
    OutboundRequest,
    RequestType,
    SuccessResponse,
    request_id_of,
)
from wisp.wire.writer import FrameSink

# ControlError and RequestFailed live in wisp.errors; named here too for the callers of old.
__all__ = ["MAX_UNMATCHED", "ControlError", "Dispatcher", "Envelope", "Handler",
           "RequestFailed"]
R = TypeVar("R")
# An untyped handler takes the request object as it came; a typed one (`on`) its TypedDict.
Handler = Callable[[JSON], Awaitable[JSON | None]]
MAX_UNMATCHED = 1024


def _untyped(request: Mapping[str, Any]) -> Any:
    return request


# The request_id of the control request the current task is answering (each handler runs
# in its own task), for a handler that reports progress on it (`control_request_progress`).
HANDLING: ContextVar[str] = ContextVar("HANDLING", default="")

class Envelope:
    """A handler's answer with fields beside `response` in the success envelope (the
    initialize answer's `pending_permission_requests`, which the SDKs read there)."""

    __slots__ = ("body", "fields")

    def __init__(self, body: JSON, fields: JSON) -> None:
        self.body = body
        self.fields = fields


class Requester(Protocol):
    """Who answers the requests wisp sends its host (`can_use_tool`, `hook_callback`,
    `mcp_message`): the dispatcher, over stdout and stdin; or, in-process, the SDK itself
    with a direct call. Raises `RequestFailed` when the host answers with an error."""

    async def request(self, payload: OutboundRequest, timeout: float | None = None) -> JSON:
        ...


class Dispatcher:
    def __init__(self, sink: FrameSink) -> None:
        self._sink = sink
        self._outbound: PendingRequests[str, JSON] = PendingRequests(MAX_UNMATCHED)
        self._handlers: dict[str, tuple[Callable[[Mapping[str, Any]], Any],
                                        Callable[[Any], Awaitable[JSON | Envelope | None]]]] = {}
        self._inbound: dict[str, asyncio.Task[None]] = {}
        self._sent: dict[str, JSON] = {}  # outbound requests still awaiting their answer
        self.closed = False

    def on(self, kind: RequestType[R],
           handler: Callable[[R], Awaitable[JSON | Envelope | None]]) -> None:
        """Routes `kind.subtype` to `handler`, which only ever sees requests that passed
        `kind`'s checks."""
        self._handlers[kind.subtype] = (kind.parse, handler)

    def register(self, subtype: str, handler: Handler) -> None:
        """Routes `subtype` to `handler` unchecked: it gets the request object as sent."""
        self._handlers[subtype] = (_untyped, handler)

    # Outbound ----------------------------------------------------------------------------

    async def request(self, payload: OutboundRequest, timeout: float | None = None) -> JSON:
        if self.closed:
            raise ChannelClosed("the control channel is closed (stdin reached EOF)")
        request_id = str(uuid.uuid4())
        future = self._outbound.expect(request_id)
        frame: JSON = {"type": "control_request", "request_id": request_id, "request": payload}
        self._sent[request_id] = frame
        self._sink.write(frame)
        try:
            return await asyncio.wait_for(future, timeout)
        except (TimeoutError, asyncio.CancelledError):
            # We stopped waiting: the peer may stop working on it.
            self._sink.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._sent.pop(request_id, None)
            self._outbound.release(request_id)

    def unanswered(self, subtype: str) -> list[JSON]:
        """The `subtype` requests sent and not yet answered, as sent (a host that attaches
        again gets them once more; its answer settles the same request_id)."""
        return [f for f in self._sent.values() if f["request"].get("subtype") == subtype]

    def _on_response(self, response: Mapping[str, Any]) -> None:
        request_id = request_id_of(response)
        if response.get("subtype") == "error":
            error = response.get("error")
            self._outbound.reject(request_id, RequestFailed(str(error or "error")))
        else:
            body = response.get("response")
            self._outbound.settle(request_id, body if isinstance(body, dict) else {})

    def close(self) -> None:
        """EOF: nobody can answer any more, so every pending request fails now."""
        self.closed = True
        self._outbound.close(RequestFailed("stdin closed before the host answered"))

    async def drain(self) -> None:
        """EOF: handlers still running (an `mcp_status` waiting for servers to start) finish,
        so a client that wrote its requests and closed stdin still gets its answers. Each is
        bounded: what they wait on from the host failed in `close()`."""
        if self._inbound:
            await asyncio.wait(list(self._inbound.values()))

    # Inbound -----------------------------------------------------------------------------

    def receive(self, frame: Mapping[str, Any]) -> None:
        """One `control_*` frame from stdin (a `wisp.wire.protocol.ControlFrame`, or the
        object as read: its shape is checked here either way)."""
        kind = frame.get("type")
        if kind == "control_response":
            response = frame.get("response")
            if isinstance(response, dict):
                self._on_response(response)
        elif kind == "control_cancel_request":
            self._cancel(request_id_of(frame))
        elif kind == "control_request":
            self._start_handler(frame)

    def _cancel(self, request_id: str) -> None:
        task = self._inbound.pop(request_id, None)
        if task is not None:
            task.cancel()
            return
        self._outbound.reject(request_id, RequestFailed("the request was cancelled"), keep=False)

    def _start_handler(self, frame: Mapping[str, Any]) -> None:
        request_id = request_id_of(frame)
        request = frame.get("request")
        if not isinstance(request, dict):
            self._reply_error(request_id, ProtocolError("control_request has no request object"))
            return
        if request_id in self._inbound:
            # A resent request whose first copy is still being handled: one answer only
            # (the reference would run it twice and answer twice).
            warn(f"wisp: control request {request_id} is already being handled; "
                 "the repeat is ignored\n")
            return
        task = asyncio.ensure_future(self._handle(request_id, request))
        self._inbound[request_id] = task
        task.add_done_callback(lambda _t: self._inbound.pop(request_id, None))

    async def _handle(self, request_id: str, request: JSON) -> None:
        HANDLING.set(request_id)  # this task's own: a handler may name its request
        subtype = str(request.get("subtype"))
        route = self._handlers.get(subtype)
        try:
            if route is None:
                raise ControlError(
                    f"Unsupported control request subtype: {subtype}", "unsupported_request"
                )
            parse, handler = route
            body = await handler(parse(request))
        except asyncio.CancelledError:
            return  # withdrawn by the peer: no response is owed
        except Exception as exc:  # the single place exceptions become wire errors
            self._reply_error(request_id, exc)
            return
        response: SuccessResponse = {"subtype": "success", "request_id": request_id}
        extra: JSON = {}
        if isinstance(body, Envelope):
            extra, body = body.fields, body.body
        if body is not None:
            response["response"] = body
        self._sink.write({"type": "control_response", "response": {**response, **extra}})

    def _reply_error(self, request_id: str, exc: Exception) -> None:
        response: ErrorResponse = {"subtype": "error", "request_id": request_id,
                                   "error": str(exc)}
        code = getattr(exc, "code", None)
        if code:
            response["error_code"] = code
        self._sink.write({"type": "control_response", "response": response})
