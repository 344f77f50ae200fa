"""Correlates control requests and responses by request_id, in both directions.

Above: typed handlers (inbound requests) and callers such as the permission prompt
(outbound requests). Below: a frame sink (stdout) and the stdin reader, which hands every
`control_*` frame to `receive`. This module knows nothing of payloads, and it is the one
place where an exception becomes a wire error.

Outbound: `request()` registers the pending future *before* writing, so a fast answer can't
race it. A response for an id nobody waits for is kept (at most 1024, oldest evicted) in
case its request is registered later. `control_cancel_request` withdraws a request in
either direction; no response is owed for it. At EOF every pending request fails locally.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from wisp.errors import ProtocolError
from wisp.wire.writer import FrameSink

JSON = dict[str, Any]
Handler = Callable[[JSON], Awaitable[JSON | None]]
MAX_UNMATCHED = 1024


class ControlError(Exception):
    """A handler's refusal, sent as `{"subtype":"error","error":…,"error_code":…}`."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class RequestFailed(Exception):
    """The peer answered an outbound request with an error, withdrew it, or went away."""


class Dispatcher:
    def __init__(self, sink: FrameSink) -> None:
        self._sink = sink
        self._pending: dict[str, asyncio.Future[JSON]] = {}
        self._unmatched: OrderedDict[str, JSON] = OrderedDict()
        self._handlers: dict[str, Handler] = {}
        self._inbound: dict[str, asyncio.Task[None]] = {}
        self.closed = False

    def register(self, subtype: str, handler: Handler) -> None:
        self._handlers[subtype] = handler

    # Outbound ----------------------------------------------------------------------------

    async def request(self, payload: JSON, timeout: float | None = None) -> JSON:
        if self.closed:
            raise RequestFailed("the control channel is closed (stdin reached EOF)")
        request_id = str(uuid.uuid4())
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        early = self._unmatched.pop(request_id, None)
        if early is not None:
            self._settle(future, early)
        self._sink.write({"type": "control_request", "request_id": request_id, "request": payload})
        try:
            return await asyncio.wait_for(future, timeout)
        except (TimeoutError, asyncio.CancelledError):
            if request_id in self._pending:
                self._sink.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    def _settle(self, future: asyncio.Future[JSON], response: JSON) -> None:
        if future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(RequestFailed(str(response.get("error") or "error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def _on_response(self, response: JSON) -> None:
        request_id = str(response.get("request_id"))
        future = self._pending.get(request_id)
        if future is not None:
            self._settle(future, response)
            return
        self._unmatched[request_id] = response
        while len(self._unmatched) > MAX_UNMATCHED:
            self._unmatched.popitem(last=False)

    def close(self) -> None:
        """EOF: nobody can answer any more, so every pending request fails now."""
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RequestFailed("stdin closed before the host answered"))

    async def drain(self) -> None:
        """EOF: handlers still running (an `mcp_status` waiting for servers to start) finish,
        so a client that wrote its requests and closed stdin still gets its answers. Each is
        bounded: what they wait on from the host failed in `close()`."""
        if self._inbound:
            await asyncio.wait(list(self._inbound.values()))

    # Inbound -----------------------------------------------------------------------------

    def receive(self, frame: JSON) -> None:
        kind = frame.get("type")
        if kind == "control_response":
            response = frame.get("response")
            if isinstance(response, dict):
                self._on_response(response)
        elif kind == "control_cancel_request":
            self._cancel(str(frame.get("request_id")))
        elif kind == "control_request":
            self._start_handler(frame)

    def _cancel(self, request_id: str) -> None:
        task = self._inbound.pop(request_id, None)
        if task is not None:
            task.cancel()
            return
        future = self._pending.get(request_id)
        if future is not None and not future.done():
            future.set_exception(RequestFailed("the request was cancelled"))

    def _start_handler(self, frame: JSON) -> None:
        request_id = str(frame.get("request_id"))
        request = frame.get("request")
        if not isinstance(request, dict):
            self._reply_error(request_id, ProtocolError("control_request has no request object"))
            return
        task = asyncio.ensure_future(self._handle(request_id, request))
        self._inbound[request_id] = task
        task.add_done_callback(lambda _t: self._inbound.pop(request_id, None))

    async def _handle(self, request_id: str, request: JSON) -> None:
        subtype = str(request.get("subtype"))
        handler = self._handlers.get(subtype)
        try:
            if handler is None:
                raise ControlError(
                    f"Unsupported control request subtype: {subtype}", "unsupported_request"
                )
            body = await handler(request)
        except asyncio.CancelledError:
            return  # withdrawn by the peer: no response is owed
        except Exception as exc:  # the single place exceptions become wire errors
            self._reply_error(request_id, exc)
            return
        response: JSON = {"subtype": "success", "request_id": request_id}
        if body is not None:
            response["response"] = body
        self._sink.write({"type": "control_response", "response": response})

    def _reply_error(self, request_id: str, exc: Exception) -> None:
        response: JSON = {"subtype": "error", "request_id": request_id, "error": str(exc)}
        code = getattr(exc, "code", None)
        if code:
            response["error_code"] = code
        self._sink.write({"type": "control_response", "response": response})
