"""JSON-RPC 2.0 over a message stream: each request matched to its response by id.

Above: a transport (`StdioMcpServer`, `SseMcpServer`) that feeds in every message the
peer writes and supplies `write`. The matching is the control channel's
(`wisp.control.pending`); a response for an id nobody waits for is dropped. The peer may
also send notifications (passed on) and requests of its own (`reply_to`, which
`HttpMcpServer` uses too): wisp declares no client capabilities (sampling, roots,
elicitation), so the only one it answers is `ping`; anything else gets the standard
method-not-found error, so a server waiting on an answer never hangs.

A message that arrives but cannot be parsed (invalid JSON, or nested deeper than Python's
parser goes) is an answer that failed: `garbled` fails the request it names, found by a
shallow scan of the top level, or every waiting request when no id can be found. Dropped,
it would leave its caller waiting for the whole tool timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from wisp.control.pending import PendingRequests
from wisp.errors import McpError, McpTimeout
from wisp.jsontypes import JSON

METHOD_NOT_FOUND = -32601
# (method, params) → the result to answer a server's request with, or None: not served.
ServerRequest = Callable[[str, Any], Awaitable[JSON | None]]
# A JSON string (escapes included) or one structural character: enough to follow nesting
# without parsing values, in linear time whatever the depth.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:]')


class RpcChannel:
    def __init__(self, write: Callable[[JSON], None],
                 on_notification: Callable[[str, Any], None],
                 on_request: ServerRequest | None = None) -> None:
        self._write = write  # raises McpError once the stream is gone
        self._on_notification = on_notification
        # The server's requests wisp serves (elicitation): None from it means "not mine".
        self._on_request = on_request
        self._serving: set[asyncio.Task[None]] = set()
        self._pending: PendingRequests[int | str, JSON] = PendingRequests()

    @property
    def failure(self) -> McpError | None:
        """Why the stream is gone, once it is."""
        failure = self._pending.failure
        return failure if isinstance(failure, McpError) else None

    async def request(self, message: JSON, timeout: float | None) -> JSON:
        """Sends `message` (which carries its id) and returns the peer's response."""
        if self.failure is not None:
            raise McpError(str(self.failure))
        key = message["id"]
        future = self._pending.expect(key)
        try:
            self._write(message)
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self._cancel(key, "timed out")
            raise McpTimeout(f"{message.get('method')} timed out after {timeout or 0:g} s"
                             ) from None
        except asyncio.CancelledError:
            self._cancel(key, "interrupted")  # the peer may stop work nobody waits for
            raise
        finally:
            self._pending.release(key)

    def notify(self, message: JSON) -> None:
        if self.failure is None:
            self._write(message)

    def feed(self, message: Any) -> None:
        """One message from the peer: a response, a request, or a notification."""
        if isinstance(message, list):  # a batch (protocol versions before 2025-06-18)
            for item in message:
                if isinstance(item, dict):  # one level only: a batch holds no batch
                    self.feed(item)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        key = message.get("id")
        if isinstance(method, str):
            if "id" in message and self._on_request is not None:
                self._serve(key, method, message.get("params"))
            elif "id" in message:
                self._answer(key, method)
            else:
                self._on_notification(method, message.get("params"))
            return
        if isinstance(key, (int, str)):
            self._pending.settle(key, message)

    def garbled(self, raw: bytes, why: str) -> None:
        """`raw` arrived but is no message (`why` says how). The request it answers fails
        now, or, when no id can be read from it, every request waiting."""
        if raw.lstrip()[:1] not in (b"{", b"["):
            return  # a stray print of the server's, not an answer gone wrong
        key = top_level_id(raw)
        error = McpError(f"the server sent a reply that cannot be read ({why}, "
                         f"{len(raw):,} bytes)")
        if key is None or not self._pending.reject(key, error, keep=False):
            self._pending.reject_waiting(error)

    def reject(self, key: int | str, error: McpError) -> None:
        """The request `key` failed on its way out (an HTTP POST refused, say)."""
        self._pending.reject(key, error, keep=False)

    def fail(self, error: McpError) -> None:
        """The stream is gone: every waiting request fails with `error`, and so will
        every later one."""
        self._pending.close(error)

    def _serve(self, request_id: Any, method: str, params: Any) -> None:
        """Answers a server's request once its handler has (it may ask the user)."""
        assert self._on_request is not None
        handler = self._on_request

        async def serve() -> None:
            try:
                result = await handler(method, params)
            except Exception as exc:  # a failed handler is the server's error answer
                with contextlib.suppress(McpError):
                    self.notify({"jsonrpc": "2.0", "id": request_id,
                                 "error": {"code": -32603, "message": str(exc)}})
                return
            if result is None:
                self._answer(request_id, method)
                return
            with contextlib.suppress(McpError):
                self.notify({"jsonrpc": "2.0", "id": request_id, "result": result})

        task = asyncio.ensure_future(serve())
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    def _answer(self, request_id: Any, method: str) -> None:
        with contextlib.suppress(McpError):
            self.notify(reply_to(request_id, method))

    def _cancel(self, key: int | str, reason: str) -> None:
        with contextlib.suppress(McpError):
            self.notify({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": key, "reason": f"wisp: {reason}"}})


def reply_to(request_id: Any, method: str) -> JSON:
    """wisp's answer to a request from a server: `ping` is answered, the rest unknown."""
    reply: JSON = {"jsonrpc": "2.0", "id": request_id}
    if method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
    return reply


def top_level_id(raw: bytes) -> int | str | None:
    """The `id` member of the object `raw` starts, if it can be read without parsing the
    rest (which may be what failed): a string or an integer, else None."""
    depth, key = 0, b""
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
        elif token == b":" and depth == 1 and key == b'"id"':
            return _id_at(raw, match.end())
        key = token if depth == 1 and token[:1] == b'"' else b""
        if depth <= 0:
            return None
    return None


def _id_at(raw: bytes, start: int) -> int | str | None:
    window = raw[start : start + 256].decode("utf-8", "replace").lstrip()
    try:
        value, _ = json.JSONDecoder().raw_decode(window)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value
