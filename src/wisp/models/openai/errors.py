"""OpenAI-compatible errors, in every body shape servers use (quirk 43), as the
`ModelAPIError`s the engine's retry and compaction logic already understands.

- The message is read from `error.message`, `error` (a string), `message`, `detail`, or
  else the first 500 bytes of the body.
- Retryable: 408, 409, 425, 429, 5xx and 529, except a 500 from a chat template (Jinja),
  which is a request-shape error and would fail the same way again (quirk 45).
- The wait: the longest of `retry-after-ms`, `retry-after` (seconds or a date), the
  `x-ratelimit-reset-*` durations (`6m0s`, `1.5s`, `200ms`) and "try again in 5.3s" in the
  message (quirk 46).
- A context-length error in any of its spellings becomes `error_type
  "context_length_exceeded"`, which makes the engine compact and try again (quirk 44).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from wisp.errors import ModelAPIError, RetryableAPIError
from wisp.jsontypes import JSON
from wisp.models.anthropic import retry_after

CONTEXT_LENGTH = "context_length_exceeded"
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_CONTEXT_PATTERNS = re.compile(
    r"maximum context length|context length|context_length|exceeds the available context"
    r"|prompt is too long|too many tokens|reduce the length|context window", re.IGNORECASE)
_TEMPLATE = re.compile(r"jinja|raise_exception|chat template|roles must alternate",
                       re.IGNORECASE)
_TRY_AGAIN = re.compile(r"try again in ([\d.]+)\s*(ms|s)\b", re.IGNORECASE)
_DURATION = re.compile(r"([\d.]+)(ms|h|m|s)")
_TYPES = {400: "invalid_request_error", 401: "authentication_error",
          403: "permission_error", 404: "not_found_error", 413: "request_too_large",
          429: "rate_limit_error", 529: "overloaded_error"}


def error_message(payload: Any, raw: str) -> tuple[str, str | None, Any]:
    """(message, type, code) from whatever shape the server used."""
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            return (str(error.get("message") or raw[:500]), _str(error.get("type")),
                    error.get("code"))
        if isinstance(error, str) and error:
            return error, None, payload.get("code")
        for key in ("message", "detail"):
            value = payload.get(key)
            if value:
                text = value if isinstance(value, str) else json.dumps(value)
                return text, _str(payload.get("type")), payload.get("code")
    return raw[:500] or "(empty body)", None, None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def status_error(status: int, raw: bytes, headers: Mapping[str, str]) -> ModelAPIError:
    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text) if text else None
    except ValueError:
        payload = None
    message, kind, code = error_message(payload, text)
    if is_context_length(message, kind, code):
        return ModelAPIError(message, status=status, error_type=CONTEXT_LENGTH)
    retryable = status in RETRYABLE and not (status >= 500 and _TEMPLATE.search(message))
    cls = RetryableAPIError if retryable else ModelAPIError
    return cls(f"{message} (HTTP {status})" if str(status) not in message else message,
               status=status, error_type=_TYPES.get(status, kind or "api_error"),
               retry_after=wait_seconds(headers, message))


def stream_error(payload: JSON) -> ModelAPIError:
    """An error object in the middle of a 200 stream (quirk 18): retryable, unless it says
    the request itself is wrong."""
    message, kind, code = error_message(payload, json.dumps(payload)[:500])
    if is_context_length(message, kind, code):
        return ModelAPIError(message, error_type=CONTEXT_LENGTH)
    status = code if isinstance(code, int) and 400 <= code < 600 else None
    if status is not None and status not in RETRYABLE:
        return ModelAPIError(message, status=status, error_type=kind or "api_error")
    return RetryableAPIError(message, status=status or 500, error_type=kind or "api_error",
                             retry_after=wait_seconds({}, message))


def is_context_length(message: str, kind: str | None, code: Any) -> bool:
    if code == CONTEXT_LENGTH or kind in (CONTEXT_LENGTH, "exceed_context_size_error"):
        return True
    return bool(_CONTEXT_PATTERNS.search(message)) and "rate" not in message.lower()


def wait_seconds(headers: Mapping[str, str], message: str) -> float | None:
    waits = [w for w in (retry_after(headers), _reset_headers(headers), _in_text(message))
             if w is not None]
    return max(waits) if waits else None


def _reset_headers(headers: Mapping[str, str]) -> float | None:
    """`x-ratelimit-reset-requests` / `-tokens` as Go durations, for a budget at 0."""
    waits = []
    for budget in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{budget}")
        reset = headers.get(f"x-ratelimit-reset-{budget}")
        if reset and (remaining is None or remaining.strip() == "0"):
            seconds = go_duration(reset.strip())
            if seconds is not None:
                waits.append(seconds)
    return max(waits) if waits else None


def go_duration(text: str) -> float | None:
    """`6m0s`, `1.5s`, `200ms`, or plain seconds."""
    try:
        return float(text)
    except ValueError:
        pass
    total, matched = 0.0, ""
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for number, unit in _DURATION.findall(text):
        total += float(number) * scale[unit]
        matched += number + unit
    return total if matched and matched == text else None


def _in_text(message: str) -> float | None:
    match = _TRY_AGAIN.search(message)
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "ms" else value
