"""What surrounds the documents on the wire: error bodies and SSE frames."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from wisp.jsonsafe import encode_utf8
from wisp.serve.shapes.documents import ErrorBody, ErrorObject

# The `error.type` of each status (ErrorResponse); others are api_error.
_ERROR_TYPES: Final = {400: "invalid_request_error", 401: "authentication_error",
                       402: "billing_error", 403: "permission_error", 404: "not_found_error",
                       408: "timeout_error", 409: "invalid_request_error",
                       412: "invalid_request_error", 413: "request_too_large",
                       422: "invalid_request_error", 429: "rate_limit_error",
                       504: "timeout_error", 529: "overloaded_error"}


def error_body(status: int, message: str, *, error_code: str | None = None,
               request_id: str | None = None) -> ErrorBody:
    """An error response body. The SDK picks its exception class from the status, and a
    narrower one from (status, `error.details.error_code`) when it knows the code
    (`environment_archived` on a 400 is BetaEnvironmentArchivedError)."""
    error: ErrorObject = {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return {"type": "error", "error": error, "request_id": request_id}


def sse_frame(event: Mapping[str, Any], *, seq: int | None = None) -> bytes:
    """One event on the stream. The SDK drops a frame without an `event:` line, so every
    frame names its type there; `id:` is the log's seq when there is one."""
    head = f"id: {seq}\n" if seq is not None else ""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return encode_utf8(f"{head}event: {event['type']}\ndata: {data}\n\n")


def sse_error(status: int, message: str) -> bytes:
    """An error mid-stream. The SDK raises it as a plain APIStatusError (its class comes
    from the HTTP status, 200 by then); `status` only picks the body's `error.type`."""
    data = json.dumps(error_body(status, message), separators=(",", ":"))
    return encode_utf8(f"event: error\ndata: {data}\n\n")


SSE_PING: Final = b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
