"""The kinds of `Reply` the builders of `reply` make, and how each renders to a `Served`
when its request arrives: a message streamed as real Messages API events, an error,
hand-made SSE or Chat Completions bytes, a cut stream, or a reply chosen by a function.
`serve` renders one for a request, for the HTTP server and the in-process models alike.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import secrets
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wisp.jsontypes import JSON
from wisp.testing.served import SSE, Headers, Outgoing, RawFrame, Reasoning, Served, sse_data

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class Reply:
    """What the server answers to one `POST /v1/messages`. Build these with the functions
    of this module; subclass and override `render` for anything they cannot express."""

    def render(self, body: JSON, body_size: int) -> Served:
        raise NotImplementedError


@dataclass(frozen=True)
class MessageReply(Reply):
    blocks: tuple[JSON, ...]
    stop_reason: str | None = "end_turn"
    usage: JSON | None = None
    chunks: int = 3  # deltas per streamed block
    delay: float = 0.0
    reasoning: Reasoning = "reasoning_content"

    def render(self, body: JSON, body_size: int) -> Served:
        override = dict(self.usage or {})
        output_tokens = override.pop("output_tokens", None)
        if output_tokens is None:
            output_tokens = max(1, len(json.dumps(list(self.blocks))) // 4)
        events: list[JSON] = [_message_start(body, body_size, override), {"type": "ping"}]
        for index, block in enumerate(self.blocks):
            events.extend(_block_events(index, block, self.chunks))
        delta = {"stop_reason": self.stop_reason, "stop_sequence": None}
        events.append(
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}}
        )
        events.append({"type": "message_stop"})
        return Served(events=_encode(events), delay=self.delay, reasoning=self.reasoning)


@dataclass(frozen=True)
class ErrorReply(Reply):
    status: int
    message: str
    error_type: str | None = None
    retry_after: float | None = None

    def render(self, body: JSON, body_size: int) -> Served:
        error_type = self.error_type or _ERROR_TYPES.get(self.status, "api_error")
        payload = {"type": "error", "error": {"type": error_type, "message": self.message}}
        headers = () if self.retry_after is None else (("retry-after", f"{self.retry_after:g}"),)
        return Served(status=self.status, json_body=payload, headers=headers)


@dataclass(frozen=True)
class RawReply(Reply):
    """A valid message_start followed by hand-made SSE events (errors, garbage)."""

    events: SSE

    def render(self, body: JSON, body_size: int) -> Served:
        start = _encode([_message_start(body, body_size, {})])
        return Served(events=start + self.events)


@dataclass(frozen=True)
class OpenAIRawReply(Reply):
    """Hand-made Chat Completions bytes, for the quirks of OpenAI-compatible servers that a
    well-formed reply cannot show (see `openai_raw`)."""

    frames: tuple[RawFrame, ...]
    status: int = 200
    headers: Headers = ()
    content_type: str | None = None
    split_at: tuple[int, ...] | None = None
    byte_by_byte: bool = False
    delay: float = 0.0
    close_after: bool = False
    stall_after_done: float = 0.0

    def render(self, body: JSON, body_size: int) -> Served:
        default = "text/event-stream" if self.status == 200 else "application/json"
        content_type = self.content_type or default
        stream = content_type.startswith("text/event-stream")
        frames = [_raw_frame(frame, stream) for frame in self.frames]
        raw = Outgoing(
            self.status,
            content_type,
            _writes(frames, self.split_at, self.byte_by_byte),
            self.headers,
            chunked=stream,
            delay=self.delay,
            terminate=not self.close_after,
            stall=self.stall_after_done,
        )
        return Served(status=self.status, raw=raw)


@dataclass(frozen=True)
class CutReply(Reply):
    after_events: int
    base: Reply

    def render(self, body: JSON, body_size: int) -> Served:
        return dataclasses.replace(self.base.render(body, body_size), cut_after=self.after_events)


@dataclass(frozen=True)
class DynamicReply(Reply):
    fn: Callable[[JSON], Reply] = field(repr=False)

    def render(self, body: JSON, body_size: int) -> Served:
        return self.fn(body).render(body, body_size)


EXHAUSTED = ErrorReply(400, "wisp.testing: no scripted reply left", "invalid_request_error")


def serve(chosen: Reply, body: JSON | None, body_size: int, *, chat: bool = False) -> Served:
    """What a scripted model answers to one request: `chosen` rendered for `body` (the
    request's JSON; `body_size` its encoded length). A body that is not a JSON object, or a
    reply whose rendering raises, is answered 400 (a dynamic reply's bug fails the test
    rather than hanging it). Shared by the HTTP server and the in-process models. Raw
    Chat Completions bytes (`openai_raw`) are accepted only for the chat route (`chat`):
    anywhere else they mean nothing, and the 400 says which reply was misplaced."""
    if not isinstance(body, dict):
        return ErrorReply(400, "wisp.testing: the request body is not a JSON object").render(
            {}, body_size
        )
    try:
        served = chosen.render(body, body_size)
    except Exception as exc:
        traceback.print_exc()
        return ErrorReply(400, f"wisp.testing: the scripted reply raised {exc!r}").render(
            body, body_size
        )
    if served.raw is not None and not chat:
        message = "wisp.testing: reply.openai_raw answers only POST .../v1/chat/completions"
        return ErrorReply(400, message).render(body, body_size)
    return served


def random_id(prefix: str) -> str:
    """A fresh id in the API's style (`msg_…`, `toolu_…`)."""
    return prefix + secrets.token_hex(12)


def _message_start(body: JSON, body_size: int, usage: JSON) -> JSON:
    message: JSON = {
        "id": random_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": body_size // 4,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
            **usage,
        },
    }
    return {"type": "message_start", "message": message}


def _block_events(index: int, block: JSON, chunks: int) -> list[JSON]:
    kind = block.get("type")
    start: JSON = dict(block)  # block types without deltas are sent whole
    deltas: list[JSON] = []
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = _deltas("text_delta", "text", block["text"], chunks)
    elif kind == "tool_use":
        start["input"] = {}
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = _deltas("input_json_delta", "partial_json", raw, chunks)
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = _deltas("thinking_delta", "thinking", block["thinking"], chunks)
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _deltas(kind: str, key: str, value: str, chunks: int) -> list[JSON]:
    """`value` in `chunks` near-equal pieces, cut anywhere (the real API cuts JSON mid-token)."""
    if not value:
        return []
    step = max(1, -(-len(value) // max(1, chunks)))
    return [{"type": kind, key: value[i : i + step]} for i in range(0, len(value), step)]


def _raw_frame(frame: RawFrame, stream: bool) -> bytes:
    """One `openai_raw` frame as bytes: an SSE data line in a stream, bare in a body."""
    if isinstance(frame, bytes):
        return frame
    if isinstance(frame, dict):
        return sse_data(frame) if stream else json.dumps(frame).encode()
    return sse_data(frame) if stream and frame == "[DONE]" else frame.encode()


def _writes(
    frames: list[bytes], split_at: tuple[int, ...] | None, byte_by_byte: bool
) -> tuple[bytes, ...]:
    """The separate writes of `openai_raw`: one per frame unless told otherwise. Empty
    ones are dropped (an empty HTTP chunk would end the body)."""
    data = b"".join(frames)
    pieces: Iterable[bytes] = frames
    if byte_by_byte:
        pieces = (data[i : i + 1] for i in range(len(data)))
    elif split_at is not None:
        bounds = [0, *sorted(b for b in set(split_at) if 0 < b < len(data)), len(data)]
        pieces = (data[start:end] for start, end in itertools.pairwise(bounds))
    return tuple(piece for piece in pieces if piece)


def _encode(events: Iterable[JSON]) -> SSE:
    return tuple((e["type"], json.dumps(e, ensure_ascii=False)) for e in events)
