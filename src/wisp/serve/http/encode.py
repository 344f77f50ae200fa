"""The bytes of a response: the status line and headers, and a whole (JSON) answer."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from wisp.serve.http.messages import HttpError, Response, error_body

# Made once: json.dumps with non-default options builds an encoder per call.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_REASONS = {status.value: status.phrase for status in HTTPStatus}


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


def response_head(status: int, headers: Mapping[str, str], keep_alive: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"]
    lines.extend(f"{name}: {value}\r\n" for name, value in headers.items())
    lines.append(f"date: {_http_date()}\r\nconnection: {'keep-alive' if keep_alive else 'close'}")
    lines.append("\r\n\r\n")
    return "".join(lines).encode("latin-1")


def encode_response(response: Response, request_id: str, keep_alive: bool) -> bytes:
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
        if name not in RESERVED_HEADERS:
            headers[name] = value
    if response.status in (204, 304):
        payload = b""  # no body, and no content-length either (RFC 9110 §8.6)
        headers.pop("content-type", None)
    else:
        headers["content-length"] = str(len(payload))
    headers["request-id"] = request_id
    return response_head(response.status, headers, keep_alive) + payload


# The server frames the message itself; a handler's copies of these would contradict it.
RESERVED_HEADERS = frozenset(("content-length", "transfer-encoding", "connection", "request-id",
                              "date"))


def error_response(err: HttpError, request_id: str) -> Response:
    return Response(err.status, error_body(err.type, err.message, request_id, err.details),
                    err.headers)
