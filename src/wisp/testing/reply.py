"""Scripted replies for `wisp.testing.ScriptedServer`, `ScriptedModel` and `FunctionModel`.

    from wisp.testing import ScriptedServer, reply
    server.script(reply.tool_use("Bash", {"command": "ls"}), reply.text("done"))

A `Reply` is rendered per request (`serve`) into a `Served`: what the server writes back.
That is an SSE stream shaped like the real Messages API (message_start, ping, content
blocks with deltas, message_delta, message_stop), or an error status with a JSON error
body. Rendering happens when the request arrives, so usage can be estimated from its size,
as the fake server used to probe the reference CLI did (input_tokens = len(json body) // 4).
The HTTP server writes a `Served` to a socket; the in-process models (`wisp.testing.model`)
hand the same events to the engine directly, so one script means the same thing to both.
On the Chat Completions route, `wisp.testing.openai_wire` translates the same events into
chunks, so one script also means the same thing to an OpenAI-compatible client. Only
`openai_raw` is route-specific: it is bytes for the chat route, and a 400 anywhere else.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import secrets
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from wisp.jsontypes import JSON

SSE = tuple[tuple[str, str], ...]  # (event name, data) pairs
Headers = tuple[tuple[str, str], ...]
RawFrame = JSON | str | bytes  # an `openai_raw` frame: see there
# Where a thinking block goes in a Chat Completions answer: the delta field DeepSeek and
# vLLM use, the one OpenRouter and Ollama use, or `<think>` tags inline in the content.
Reasoning = Literal["reasoning_content", "reasoning", "think_tags"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Outgoing:
    """One response as the HTTP server writes it: both routes render to this, so one
    writer (`ScriptedServer`) owns sockets, chunk framing, delays and cuts."""

    status: int
    content_type: str
    pieces: tuple[bytes, ...]  # each written on its own: one HTTP chunk each when chunked
    headers: Headers = ()
    chunked: bool = True  # Transfer-Encoding: chunked (else Content-Length)
    delay: float = 0.0  # seconds before each piece but the first
    cut_at: int | None = None  # write half of this piece (framing included), then hang up
    terminate: bool = True  # end with the zero-length chunk (else hang up after the body)
    stall: float = 0.0  # seconds the connection stays open after the last piece

    @classmethod
    def of_json(cls, status: int, payload: JSON | None, headers: Headers = ()) -> Outgoing:
        """A plain JSON body (None: an empty one, as HEAD answers have)."""
        data = b"" if payload is None else json.dumps(payload).encode()
        return cls(status, "application/json", (data,), headers, chunked=False)

    @classmethod
    def of_sse(
        cls,
        payloads: Sequence[bytes],
        served: Served,
        headers: Headers,
        cut_at: int | None,
    ) -> Outgoing:
        """An SSE stream of `payloads` with `served`'s status, delay and cut (`cut_at`: the
        payload where `served.cut_after` falls, translated by the caller)."""
        return cls(
            served.status,
            "text/event-stream; charset=utf-8",
            tuple(payloads),
            headers,
            delay=served.delay,
            cut_at=cut_at,
            terminate=served.cut_after is None,
        )


@dataclass(frozen=True)
class Served:
    """One response: a JSON body (when `json_body` is set) or an SSE stream of `events`."""

    status: int = 200
    json_body: JSON | None = None
    events: SSE = ()
    headers: Headers = ()
    delay: float = 0.0  # seconds between SSE events
    cut_after: int | None = None  # send this many events, then drop the connection
    reasoning: Reasoning = "reasoning_content"  # thinking on the chat route (openai_wire)
    # Bytes given as they are (`openai_raw`): the chat route writes them, `serve` refuses
    # them elsewhere.
    raw: Outgoing | None = None

    @property
    def sent_events(self) -> SSE:
        """The events that reach the client whole: all of them, or those before the cut."""
        return self.events if self.cut_after is None else self.events[: self.cut_after]


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


def text(
    text: str,
    *,
    chunks: int = 3,
    stop_reason: str = "end_turn",
    usage: JSON | None = None,
    delay: float = 0.0,
) -> Reply:
    return MessageReply(({"type": "text", "text": text},), stop_reason, usage, chunks, delay)


def tool_use(
    name: str,
    input: JSON,
    *,
    id: str | None = None,
    text: str | None = None,
    usage: JSON | None = None,
    chunks: int = 3,
) -> Reply:
    lead = ({"type": "text", "text": text},) if text else ()
    return MessageReply((*lead, _tool_block(name, input, id)), "tool_use", usage, chunks)


def tool_uses(
    calls: Iterable[tuple[str, JSON]], *, text: str | None = None, usage: JSON | None = None
) -> Reply:
    lead = ({"type": "text", "text": text},) if text else ()
    blocks = tuple(_tool_block(name, input, None) for name, input in calls)
    return MessageReply((*lead, *blocks), "tool_use", usage)


def thinking(
    thinking: str,
    text: str,
    *,
    signature: str | None = None,
    usage: JSON | None = None,
    reasoning: Reasoning = "reasoning_content",
) -> Reply:
    """Thinking, then text. `reasoning` says how the chat route sends the thinking: as
    `delta.reasoning_content`, as `delta.reasoning`, or inline in the content between
    `<think>` tags ("think_tags"); the Messages route ignores it."""
    block = {"type": "thinking", "thinking": thinking, "signature": signature or _hex("sig_")}
    blocks = (block, {"type": "text", "text": text})
    return MessageReply(blocks, usage=usage, reasoning=reasoning)


def message(
    blocks: Sequence[JSON],
    *,
    stop_reason: str | None = "end_turn",
    usage: JSON | None = None,
    chunks: int = 3,
    delay: float = 0.0,
    reasoning: Reasoning = "reasoning_content",
) -> Reply:
    """Any content: text, tool_use (an `id` is added if missing), thinking, or other block
    types (sent whole in content_block_start; the chat route drops them). `reasoning` as
    for `thinking`."""
    filled = tuple(
        {**b, "id": b.get("id") or _hex("toolu_")} if b.get("type") == "tool_use" else dict(b)
        for b in blocks
    )
    return MessageReply(filled, stop_reason, usage, chunks, delay, reasoning)


def max_tokens(text: str, *, usage: JSON | None = None) -> Reply:
    return MessageReply(({"type": "text", "text": text},), "max_tokens", usage)


def error(
    status: int, message: str, *, error_type: str | None = None, retry_after: float | None = None
) -> Reply:
    return ErrorReply(status, message, error_type, retry_after)


def slow(text: str, delay_per_event: float, *, chunks: int = 10) -> Reply:
    """A text reply that sleeps between SSE events (for interrupt and timeout tests)."""
    return MessageReply(({"type": "text", "text": text},), chunks=chunks, delay=delay_per_event)


def cut(after_events: int, base: Reply | None = None) -> Reply:
    """Send `after_events` SSE events of `base`, then drop the connection mid-chunk."""
    return CutReply(after_events, base or text("this reply is cut short", chunks=5))


def malformed() -> Reply:
    return RawReply((("content_block_start", '{"type": "content_block_start", "index": 0,'),))


def sse_error(error_type: str = "overloaded_error", message: str = "Overloaded") -> Reply:
    payload = {"type": "error", "error": {"type": error_type, "message": message}}
    return RawReply((("error", json.dumps(payload)),))


def openai_raw(
    frames: Sequence[RawFrame],
    *,
    status: int = 200,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    content_type: str | None = None,
    split_at: Iterable[int] | None = None,
    byte_by_byte: bool = False,
    delay: float = 0.0,
    close_after: bool = False,
    stall_after_done: float = 0.0,
) -> Reply:
    """Chat Completions bytes exactly as given, for quirk tests; only `POST
    .../v1/chat/completions` takes it (the Messages route and the in-process models answer
    it with a 400 naming it).

    Each frame is a dict (sent as `data: <compact json>\\n\\n`), the string "[DONE]" (sent
    as `data: [DONE]\\n\\n`), any other string (sent verbatim: SSE comments such as
    ": OPENROUTER PROCESSING\\n\\n", CRLF line ends, multi-line data) or bytes (verbatim).

    The body is streamed (chunked, one write per frame) when `content_type` is an event
    stream, the default for `status` 200. Any other content type, the default
    (application/json) for another status, makes it a plain body with a Content-Length,
    its frames concatenated (a dict as bare JSON): a stream answered with JSON, or an
    error body of any shape (`{"error": "text"}`, `{"detail": ..}`, HTML with
    `content_type="text/html"`).

    `byte_by_byte` writes one byte at a time; `split_at` gives the write boundaries as
    offsets into the concatenated bytes instead; `delay` sleeps between writes;
    `close_after` hangs up after the last frame (no zero-length chunk); `stall_after_done`
    holds the connection open that many seconds after the last frame."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return OpenAIRawReply(
        tuple(frames),
        status,
        tuple(pairs),
        content_type,
        None if split_at is None else tuple(split_at),
        byte_by_byte,
        delay,
        close_after,
        stall_after_done,
    )


def echo() -> Reply:
    """Answers "echo: <the last user text>"."""
    return DynamicReply(lambda body: text(f"echo: {last_user_text(body)}"))


def dynamic(fn: Callable[[JSON], Reply]) -> Reply:
    """Let `fn(request_body)` choose the reply when the request arrives."""
    return DynamicReply(fn)


def last_user_text(body: JSON) -> str:
    """The last text block (or string content) of the last user message that has one.
    Both APIs shape user messages alike (a string, or parts `{"type": "text", "text"}`),
    so this reads Messages and Chat Completions requests; tool results (user messages
    of tool_result blocks, or `role: "tool"`) are skipped."""
    for msg in reversed(body.get("messages") or []):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content
        texts = [
            b.get("text", "")
            for b in content or []
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        if texts:
            return str(texts[-1])
    return ""


def _hex(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def _tool_block(name: str, input: JSON, id: str | None) -> JSON:
    return {"type": "tool_use", "id": id or _hex("toolu_"), "name": name, "input": input}


def _message_start(body: JSON, body_size: int, usage: JSON) -> JSON:
    message: JSON = {
        "id": _hex("msg_"),
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


def sse_payload(name: str, data: str) -> bytes:
    """One SSE event as the server writes it."""
    return f"event: {name}\n".encode() + sse_data(data)


def sse_data(data: str | JSON) -> bytes:
    """One unnamed SSE event (Chat Completions sends no `event:` lines); a dict is sent as
    compact JSON, as OpenAI's servers write it."""
    if isinstance(data, dict):
        data = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


def http_chunk(payload: bytes) -> bytes:
    """`payload` framed as a single HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def sse_chunk(name: str, data: str) -> bytes:
    """One SSE event as the server writes it, framed as a single HTTP/1.1 chunk."""
    return http_chunk(sse_payload(name, data))


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
