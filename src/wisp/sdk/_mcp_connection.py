"""One client's JSON-RPC exchange with an in-process MCP server (`wisp.sdk.mcp`): the
handshake, ping, tools/list, tools/call, and cancellation by request id, answered as the
official SDK answers them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.sdk.mcp import SdkMcpServer

# Protocol revisions an `initialize` can agree on; any other request gets the newest.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600
REQUEST_CANCELLED = -32800


def _error(request_id: Any, code: int, message: str, data: Any = None) -> JSON:
    error: JSON = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _invalid_params(request_id: Any) -> JSON:
    return _error(request_id, INVALID_PARAMS, "Invalid request parameters", "")


def _valid_initialize(params: JSON) -> bool:
    client = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
    )


class SdkMcpConnection:
    """One client's JSON-RPC exchange with an `SdkMcpServer`: its requests in flight, which
    its `notifications/cancelled` may stop."""

    def __init__(self, server: SdkMcpServer) -> None:
        self.server = server
        # Several calls may share an id on the shared connection (one per CLI session).
        self._running: dict[Any, list[asyncio.Task[JSON]]] = {}
        self._cancelled: set[asyncio.Task[JSON]] = set()

    async def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The response for a request, None for a notification or a response (which
        expect no reply)."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request")
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params")
        if not isinstance(method, str):
            return None  # a response to something we never send
        if params is not None and not isinstance(params, dict):
            return None if request_id is None else _invalid_params(request_id)
        if request_id is None:
            self._notified(method, params or {})
            return None
        if not isinstance(request_id, str | int):
            return _error(None, INVALID_REQUEST, "Invalid Request")
        return await self._request(request_id, method, params or {})

    async def _request(  # noqa: PLR0911 (one arm per method)
        self, request_id: Any, method: str, params: JSON
    ) -> JSON:
        server = self.server
        if method == "initialize":
            if not _valid_initialize(params):
                return _invalid_params(request_id)
            wanted = params["protocolVersion"]
            agreed = wanted if wanted in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
            return _result(request_id, {
                "protocolVersion": agreed,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": server.name, "version": server.version},
            })
        if method == "ping":
            return _result(request_id, {})
        if method == "tools/list":
            return _result(request_id, {"tools": server.list_tools()})
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not isinstance(arguments, dict | None):
                return _invalid_params(request_id)
            return await self._tracked(request_id, server.call_tool(name, arguments))
        return _error(request_id, METHOD_NOT_FOUND, "Method not found", method)

    def _notified(self, method: str, params: JSON) -> None:
        if method != "notifications/cancelled":
            return  # initialized, progress, roots changes...: nothing to do
        request_id = params.get("requestId")
        if not isinstance(request_id, str | int):
            return
        for task in self._running.get(request_id, ()):
            if not task.done():
                self._cancelled.add(task)
                task.cancel()

    async def _tracked(self, request_id: Any, call: Awaitable[JSON]) -> JSON:
        """Runs a tool call as a task that `notifications/cancelled` can stop; a stopped
        call is answered "Request cancelled" (-32800), as the official SDK answers it."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio, say): no cancellation by request id
            return _result(request_id, await call)
        task = asyncio.ensure_future(call)
        self._running.setdefault(request_id, []).append(task)
        try:
            return _result(request_id, await task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            caller_cancelled = current is not None and current.cancelling() > 0
            if task in self._cancelled and task.cancelled() and not caller_cancelled:
                return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
            raise
        finally:
            self._cancelled.discard(task)
            running = self._running.get(request_id, [])
            if task in running:
                running.remove(task)
            if not running:
                self._running.pop(request_id, None)


def _result(request_id: Any, result: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_PROTOCOL_VERSION",
    "METHOD_NOT_FOUND",
    "REQUEST_CANCELLED",
    "SdkMcpConnection",
]
