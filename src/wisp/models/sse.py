"""Server-sent events: body lines in, Anthropic event dicts out.

Above: `wisp.models.anthropic` iterates `batched_events(response.line_batches())`.
Below: `wisp.models.http.HTTPResponse`, which already split the body on newlines.

The decoder follows the WHATWG SSE rules that matter for the Messages API: `event:` and
`data:` fields, multi-line data joined with "\\n", `:` comment lines, dispatch on a blank
line, and an unterminated event at end of stream discarded (a truncated stream must not
look complete). `id:` and `retry:` are ignored: we never reconnect a model stream. Lines
end in "\n" or "\r\n"; a bare "\r" (legal SSE, never sent by the API) is not a line end.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from typing import NamedTuple

from wisp.errors import ModelAPIError, RetryableAPIError
from wisp.jsontypes import JSON

# In-stream errors arrive on a 200 response, so their HTTP status is implied by the type.
_STREAM_ERROR_STATUS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}
_EXCERPT = 200


class SSEEvent(NamedTuple):  # not a dataclass: those cost ~1 ms each to define at import
    event: str | None
    data: str


class SSEDecoder:
    """Feed it one line at a time (terminator already stripped); it returns whole events."""

    __slots__ = ("_data", "_event")

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == 0x3A:  # ":" starts a comment (keep-alives)
            return None
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value.decode("utf-8", "replace"))
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        return None

    def _dispatch(self) -> SSEEvent | None:
        event, data = self._event, self._data
        self._event, self._data = None, []
        if not data:
            return None  # per the spec an event with no data is not dispatched
        return SSEEvent(event, data[0] if len(data) == 1 else "\n".join(data))


async def sse_events(lines: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    decoder = SSEDecoder()
    async for line in lines:
        event = decoder.feed(line)
        if event is not None:
            yield event


def decode_event(sse: SSEEvent) -> JSON:
    """The JSON payload of one event. An `error` event raises instead of returning."""
    try:
        payload = json.loads(sse.data)
    # RecursionError: a payload nested thousands deep. Caught rather than pre-scanned
    # (wisp.jsonsafe), as this runs for every event of every stream.
    except (ValueError, RecursionError) as exc:
        raise ModelAPIError(
            f"Malformed SSE event from the API: {exc}: {_excerpt(sse.data)}"
        ) from None
    if not isinstance(payload, dict):
        raise ModelAPIError(
            f"Malformed SSE event from the API: not an object: {_excerpt(sse.data)}"
        )
    if sse.event == "error" or payload.get("type") == "error":
        raise stream_error(payload)
    return payload


async def events(lines: AsyncIterable[bytes]) -> AsyncIterator[JSON]:
    """Anthropic event dicts (including `ping`) from the body lines of an SSE response."""
    async for sse in sse_events(lines):
        yield decode_event(sse)


async def batched_events(batches: AsyncIterable[list[bytes]]) -> AsyncGenerator[JSON, None]:
    """`events`, from the lines of each network read at once (see `line_batches`)."""
    decoder = SSEDecoder()
    async for batch in batches:
        for line in batch:
            sse = decoder.feed(line)
            if sse is not None:
                yield decode_event(sse)


def stream_error(payload: JSON) -> ModelAPIError:
    """The exception for an in-stream `{"type":"error","error":{...}}` payload."""
    error_type, message = error_fields(payload)
    status = _STREAM_ERROR_STATUS.get(error_type or "")
    if status is None:
        return ModelAPIError(message or "The API reported an error", error_type=error_type)
    return RetryableAPIError(message or error_type or "", status=status, error_type=error_type)


def error_fields(payload: object) -> tuple[str | None, str | None]:
    """(`error.type`, `error.message`) of an API error body, when it has that shape."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None, None
    error_type, message = error.get("type"), error.get("message")
    return (
        error_type if isinstance(error_type, str) else None,
        message if isinstance(message, str) else None,
    )


def _excerpt(data: str) -> str:
    return repr(data if len(data) <= _EXCERPT else data[:_EXCERPT] + "…")
