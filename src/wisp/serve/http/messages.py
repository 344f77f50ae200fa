"""What handlers see and return: Request, Response, EventStream, HttpError, and the
Anthropic error body every refusal is answered with."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.serve.http.sse import SseWriter

# A body sent as JSON: an object or an array (wisp.jsontypes.JSON is the object alone).
JsonBody = dict[str, Any] | list[Any]


class HttpError(Exception):
    """An answer other than success: `type` is an Anthropic error type
    (invalid_request_error, authentication_error, permission_error, not_found_error,
    request_too_large, rate_limit_error, api_error, overloaded_error, …)."""

    def __init__(
        self, status: int, type: str, message: str, *, headers: Mapping[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.headers = dict(headers) if headers else {}
        self.details = details  # `error.details` (its `error_code` picks the SDK's class)


def error_body(type: str, message: str, request_id: str | None,
               details: dict[str, Any] | None = None) -> JSON:
    """The body the anthropic SDK parses into APIStatusError (`.type`, `.api_message`,
    `.error_code` from `details`)."""
    error: dict[str, Any] = {"type": type, "message": message}
    if details is not None:
        error["details"] = details
    return {"type": "error", "error": error, "request_id": request_id}


def bad_request(message: str) -> HttpError:
    return HttpError(400, "invalid_request_error", message)


_UNSET: Any = object()


class Request:
    __slots__ = (
        "_json",
        "body",
        "body_stream",
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
        # A route added with `stream_body=True` reads its body here (`BodyStream`) instead
        # of from `body`, which stays empty.
        self.body_stream: Any = None
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
                raise bad_request("request body is empty; expected JSON")
            try:
                self._json = json.loads(self.body)
            except (ValueError, RecursionError) as exc:
                raise bad_request(f"request body is not valid JSON: {exc}") from None
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
        body: JsonBody | bytes | Any | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        # body: dict/list (JSON), bytes, None, or a `FileBody` sent from its file.
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
