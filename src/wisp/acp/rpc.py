"""JSON-RPC 2.0 over newline-delimited JSON, both ways: what ACP runs on.

Above: `wisp.acp.agent`, which answers the editor's requests and sends requests of its
own (`session/request_permission`, `fs/*`). Below: two byte streams (stdin/stdout). The
editor's requests each run in their own task, so a `session/cancel` is read while a
`session/prompt` is still running. This is the one place where exceptions become
JSON-RPC errors: `RpcError` with its code, anything else an internal error (the request
fails, the connection and its sessions go on).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from wisp.diagnostics import warn
from wisp.jsontypes import JSON

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # ACP's code for an unknown session
Handler = Callable[[str, JSON], Awaitable[Any]]


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def wire(self) -> JSON:
        error: JSON = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ConnectionClosed(Exception):
    """The editor went away: a request to it can get no answer."""


class Peer:
    def __init__(self, write: Callable[[bytes], None], handle: Handler,
                 notify: Handler) -> None:
        self._write = write
        self._handle = handle  # requests: the result, or an exception
        self._notify = notify  # notifications: errors are logged, never answered
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    # Outbound --------------------------------------------------------------------------

    def send(self, message: JSON) -> None:
        if self.closed:
            return
        message["jsonrpc"] = "2.0"
        try:
            self._write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError, ValueError):
            self.close()

    def notify(self, method: str, params: JSON) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: JSON) -> Any:
        if self.closed:
            raise ConnectionClosed(method)
        self._next_id += 1
        key = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future  # registered before it is written
        self.send({"id": key, "method": method, "params": params})
        try:
            return await future
        finally:
            self._waiting.pop(key, None)

    # Inbound ---------------------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self.send({"id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}})
            return
        if not isinstance(message, dict):
            self._invalid(None)
            return
        if "method" in message:
            self._inbound(message)
        elif "id" in message and ("result" in message or "error" in message):
            self._answered(message)
        else:
            self._invalid(message.get("id"))

    def _invalid(self, key: Any) -> None:
        self.send({"id": key if isinstance(key, (int, str)) else None,
                   "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}})

    def _inbound(self, message: JSON) -> None:
        method, params, key = message["method"], message.get("params", {}), message.get("id")
        if not isinstance(method, str) or not isinstance(params, dict) or isinstance(
                key, (bool, float, dict, list)):
            self._invalid(key)
            return
        work = self._answer(key, method, params) if "id" in message else \
            self._notified(method, params)
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, key: Any, method: str, params: JSON) -> None:
        try:
            result = await self._handle(method, params)
        except RpcError as exc:
            self.send({"id": key, "error": exc.wire()})
        except ConnectionClosed:
            return
        except Exception as exc:  # a bug fails this request, not the connection
            warn(traceback.format_exc())
            self.send({"id": key, "error": {"code": INTERNAL_ERROR, "message": str(exc)}})
        else:
            self.send({"id": key, "result": result if result is not None else {}})

    async def _notified(self, method: str, params: JSON) -> None:
        try:
            await self._handle_notification(method, params)
        except Exception:  # a notification has no answer to carry an error
            warn(traceback.format_exc())

    async def _handle_notification(self, method: str, params: JSON) -> None:
        await self._notify(method, params)

    def _answered(self, message: JSON) -> None:
        future = self._waiting.get(message["id"]) if isinstance(message["id"], int) else None
        if future is None or future.done():
            return  # nobody waits for it (cancelled, or a stray id)
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(RpcError(int(error.get("code", INTERNAL_ERROR)),
                                          str(error.get("message", "error")), error.get("data")))
        else:
            future.set_result(message.get("result"))

    def close(self) -> None:
        """The editor is gone: whatever waits on it fails now instead of hanging."""
        self.closed = True
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the client disconnected"))

    async def drain(self) -> None:
        """Lets the requests still running finish (a cancelled turn ends quickly)."""
        while self._tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait(set(self._tasks))
