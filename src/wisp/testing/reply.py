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
"""

from __future__ import annotations

import json
import secrets
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]
SSE = tuple[tuple[str, str], ...]  # (event name, data) pairs

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
class Served:
    """One response: a JSON body (when `json_body` is set) or an SSE stream of `events`."""

    status: int = 200
    json_body: JSON | None = None
    events: SSE = ()
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds between SSE events
    cut_after: int | None = None  # send this many events, then drop the connection

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
        return Served(events=_encode(events), delay=self.delay)


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
class CutReply(Reply):
    after_events: int
    base: Reply

    def render(self, body: JSON, body_size: int) -> Served:
        served = self.base.render(body, body_size)
        return Served(
            served.status,
            served.json_body,
            served.events,
            served.headers,
            served.delay,
            self.after_events,
        )


@dataclass(frozen=True)
class DynamicReply(Reply):
    fn: Callable[[JSON], Reply] = field(repr=False)

    def render(self, body: JSON, body_size: int) -> Served:
        return self.fn(body).render(body, body_size)


EXHAUSTED = ErrorReply(400, "wisp.testing: no scripted reply left", "invalid_request_error")


def serve(chosen: Reply, body: JSON | None, body_size: int) -> Served:
    """What a scripted model answers to one request: `chosen` rendered for `body` (the
    request's JSON; `body_size` its encoded length). A body that is not a JSON object, or a
    reply whose rendering raises, is answered 400 (a dynamic reply's bug fails the test
    rather than hanging it). Shared by the HTTP server and the in-process models."""
    if not isinstance(body, dict):
        return ErrorReply(400, "wisp.testing: the request body is not a JSON object").render(
            {}, body_size
        )
    try:
        return chosen.render(body, body_size)
    except Exception as exc:
        traceback.print_exc()
        return ErrorReply(400, f"wisp.testing: the scripted reply raised {exc!r}").render(
            body, body_size
        )


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
    thinking: str, text: str, *, signature: str | None = None, usage: JSON | None = None
) -> Reply:
    block = {"type": "thinking", "thinking": thinking, "signature": signature or _hex("sig_")}
    return MessageReply((block, {"type": "text", "text": text}), usage=usage)


def message(
    blocks: Sequence[JSON],
    *,
    stop_reason: str | None = "end_turn",
    usage: JSON | None = None,
    chunks: int = 3,
    delay: float = 0.0,
) -> Reply:
    """Any content: text, tool_use (an `id` is added if missing), thinking, or other block
    types (sent whole in content_block_start)."""
    filled = tuple(
        {**b, "id": b.get("id") or _hex("toolu_")} if b.get("type") == "tool_use" else dict(b)
        for b in blocks
    )
    return MessageReply(filled, stop_reason, usage, chunks, delay)


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


def echo() -> Reply:
    """Answers "echo: <the last user text>"."""
    return DynamicReply(lambda body: text(f"echo: {last_user_text(body)}"))


def dynamic(fn: Callable[[JSON], Reply]) -> Reply:
    """Let `fn(request_body)` choose the reply when the request arrives."""
    return DynamicReply(fn)


def last_user_text(body: JSON) -> str:
    """The last text block (or string content) of the last user message that has one."""
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
    return f"event: {name}\ndata: {data}\n\n".encode()


def sse_chunk(name: str, data: str) -> bytes:
    """One SSE event as the server writes it, framed as a single HTTP/1.1 chunk."""
    payload = sse_payload(name, data)
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _encode(events: Iterable[JSON]) -> SSE:
    return tuple((e["type"], json.dumps(e, ensure_ascii=False)) for e in events)
