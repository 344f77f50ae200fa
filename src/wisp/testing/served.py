"""What the scripted server writes back for one request (see `reply`): a `Served` (an
SSE stream of Messages API events, or a status with a JSON body), the `Outgoing` bytes
both routes render it to, and the SSE and HTTP chunk framing they share.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from wisp.jsontypes import JSON

SSE = tuple[tuple[str, str], ...]  # (event name, data) pairs
Headers = tuple[tuple[str, str], ...]
RawFrame = JSON | str | bytes  # an `openai_raw` frame: see there
# Where a thinking block goes in a Chat Completions answer: the delta field DeepSeek and
# vLLM use, the one OpenRouter and Ollama use, or `<think>` tags inline in the content.
Reasoning = Literal["reasoning_content", "reasoning", "think_tags"]


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
