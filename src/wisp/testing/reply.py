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

The parts: `served` (what is written back, and its framing), `reply_kinds` (the `Reply`
classes and `serve`); this module holds the builders, and every name stays importable
from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence

from wisp.jsontypes import JSON
from wisp.testing.reply_kinds import (
    EXHAUSTED,
    CutReply,
    DynamicReply,
    ErrorReply,
    MessageReply,
    OpenAIRawReply,
    RawReply,
    Reply,
    random_id,
    serve,
)
from wisp.testing.served import (
    SSE,
    Headers,
    Outgoing,
    RawFrame,
    Reasoning,
    Served,
    http_chunk,
    sse_chunk,
    sse_data,
    sse_payload,
)

__all__ = [
    "EXHAUSTED", "SSE", "CutReply", "DynamicReply", "ErrorReply", "Headers", "MessageReply",
    "OpenAIRawReply", "Outgoing", "RawFrame", "RawReply", "Reasoning", "Reply", "Served",
    "cut", "dynamic", "echo", "error", "http_chunk", "last_user_text", "malformed",
    "max_tokens", "message", "openai_raw", "serve", "slow", "sse_chunk", "sse_data",
    "sse_error", "sse_payload", "text", "thinking", "tool_use", "tool_uses",
]


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
    block = {"type": "thinking", "thinking": thinking, "signature": signature or random_id("sig_")}
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
        {**b, "id": b.get("id") or random_id("toolu_")} if b.get("type") == "tool_use" else dict(b)
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


def _tool_block(name: str, input: JSON, id: str | None) -> JSON:
    return {"type": "tool_use", "id": id or random_id("toolu_"), "name": name, "input": input}
