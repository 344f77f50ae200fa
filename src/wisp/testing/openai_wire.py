"""Chat Completions on the wire: how `ScriptedServer` answers `POST .../v1/chat/completions`.

Above: `respond(served, body, headers)` gives the bytes for one request, from the same
`Served` a reply renders for the Messages route, so one script means the same thing to an
Anthropic and an OpenAI-compatible client (`reply.openai_raw` aside: its bytes are sent
as they are).
Below: each Anthropic event becomes zero or more `chat.completion.chunk`s, as OpenAI's
servers stream them: a first chunk with the role, text as `delta.content`, thinking as
the reply chose (`reasoning_content`, `reasoning` or `<think>` tags), tool calls as a
head (index, id, name) then argument fragments (one per Anthropic delta), a chunk with the
finish reason, the usage chunk when `stream_options.include_usage` asks for it, then
`data: [DONE]`. An in-stream `error` event becomes `data: {"error": {...}}` (as OpenRouter
and vLLM send it) and undecodable data is passed on verbatim (malformed stays malformed).
A request without `stream: true` gets the chunks folded into one `chat.completion`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from wisp.jsontypes import JSON
from wisp.testing.reply import Headers, Outgoing, Served, sse_data

__all__ = ["DONE", "error_body", "respond"]

Frame = JSON | bytes  # a chunk (sent as `data: <json>`) or bytes sent as they are
DONE = sse_data("[DONE]")

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# Anthropic error types as OpenAI names them: (type, code).
_ERRORS: dict[str, tuple[str, str | None]] = {
    "invalid_request_error": ("invalid_request_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "permission_error": ("invalid_request_error", "permission_denied"),
    "not_found_error": ("invalid_request_error", "model_not_found"),
    "request_too_large": ("invalid_request_error", "request_too_large"),
    "rate_limit_error": ("requests", "rate_limit_exceeded"),
    "overloaded_error": ("server_error", "overloaded"),
    "api_error": ("server_error", None),
}


def respond(served: Served, body: JSON, headers: Headers) -> Outgoing:
    """The answer to one chat completions request, `headers` added to the reply's own."""
    if served.raw is not None:
        return dataclasses.replace(served.raw, headers=(*headers, *served.raw.headers))
    headers = (*headers, *served.headers)
    if served.json_body is not None:
        return Outgoing.of_json(served.status, error_body(served.json_body), headers)
    if not body.get("stream") and (completion := _completion(served, body)) is not None:
        return Outgoing.of_json(200, completion, headers)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    per_event = _Translator(served, body, include_usage).frames()
    cut_at = None
    if served.cut_after is not None:  # the first frame of the event the cut falls in
        cut_at = sum(len(frames) for frames in per_event[: served.cut_after])
    frames = itertools.chain.from_iterable(per_event)
    payloads = [frame if isinstance(frame, bytes) else sse_data(frame) for frame in frames]
    return Outgoing.of_sse(payloads, served, headers, cut_at)


def error_body(payload: JSON) -> JSON:
    """An Anthropic error body (`{"type": "error", "error": {type, message}}`) in OpenAI's
    shape; anything else unchanged. A type of the reply's own (`reply.error(...,
    error_type="context_length_exceeded")`) becomes both `type` and `code`."""
    error = payload.get("error")
    if payload.get("type") != "error" or not isinstance(error, dict):
        return payload
    kind = str(error.get("type"))
    openai_type, code = _ERRORS.get(kind, (kind, kind))
    message = error.get("message")
    return {"error": {"message": message, "type": openai_type, "param": None, "code": code}}


class _Translator:
    """Anthropic events to chunks, for one response. It keeps what a chunk needs from
    earlier events: the tool call index of each block, the usage from message_start."""

    def __init__(self, served: Served, body: JSON, include_usage: bool) -> None:
        self.served = served
        self.include_usage = include_usage
        self.head: JSON = {
            "id": "chatcmpl-" + secrets.token_hex(12),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or "wisp-test",
        }
        self.kinds: dict[int, str] = {}  # content block index -> block type
        self.calls: dict[int, int] = {}  # content block index -> tool call index
        self.start_usage: JSON = {}
        self.output_tokens = 0
        self.handlers: dict[str, Callable[[JSON], list[Frame]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "error": self._error,
        }

    def frames(self) -> list[list[Frame]]:
        """The frames of each event, in order (a list per event, so a cut can be placed)."""
        return [self._event(data) for _, data in self.served.events]

    def _event(self, data: str) -> list[Frame]:
        try:
            event = json.loads(data)
        except ValueError:
            return [sse_data(data)]  # malformed data stays malformed
        if not isinstance(event, dict):
            return []
        handler = self.handlers.get(str(event.get("type")))
        return handler(event) if handler else []  # ping and unknown events: nothing

    def chunk(self, delta: JSON, finish_reason: str | None = None) -> JSON:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        usage = {"usage": None} if self.include_usage else {}
        return {**self.head, "choices": [choice], **usage}

    def _message_start(self, event: JSON) -> list[Frame]:
        self.start_usage = dict((event.get("message") or {}).get("usage") or {})
        return [self.chunk({"role": "assistant", "content": ""})]

    def _block_start(self, event: JSON) -> list[Frame]:
        index, block = event.get("index", 0), event.get("content_block") or {}
        kind = self.kinds[index] = str(block.get("type"))
        if kind == "thinking" and self.served.reasoning == "think_tags":
            return [self.chunk({"content": "<think>"})]
        if kind != "tool_use":
            return []
        call = self.calls[index] = len(self.calls)
        function = {"name": block.get("name"), "arguments": ""}
        head = {"index": call, "id": _call_id(block), "type": "function", "function": function}
        return [self.chunk({"tool_calls": [head]})]

    def _block_delta(self, event: JSON) -> list[Frame]:
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            return [self.chunk({"content": delta.get("text", "")})]
        if kind == "thinking_delta":
            field = self.served.reasoning
            key = "content" if field == "think_tags" else field
            return [self.chunk({key: delta.get("thinking", "")})]
        if kind == "input_json_delta" and event.get("index") in self.calls:
            fragment = {"arguments": delta.get("partial_json", "")}
            call = {"index": self.calls[event["index"]], "function": fragment}
            return [self.chunk({"tool_calls": [call]})]
        return []  # signature deltas have no Chat Completions form

    def _block_stop(self, event: JSON) -> list[Frame]:
        thinking = self.kinds.get(event.get("index", 0)) == "thinking"
        if thinking and self.served.reasoning == "think_tags":
            return [self.chunk({"content": "</think>"})]
        return []

    def _message_delta(self, event: JSON) -> list[Frame]:
        self.output_tokens = int((event.get("usage") or {}).get("output_tokens") or 0)
        reason = (event.get("delta") or {}).get("stop_reason")
        return [self.chunk({}, _FINISH.get(str(reason), "stop"))]

    def _message_stop(self, event: JSON) -> list[Frame]:
        if not self.include_usage:
            return [DONE]
        return [{**self.head, "choices": [], "usage": self.usage()}, DONE]

    def _error(self, event: JSON) -> list[Frame]:
        return [error_body(event)]

    def usage(self) -> JSON:
        """OpenAI's usage: prompt tokens include the cached ones, which Anthropic's
        input_tokens leave out."""
        start = self.start_usage
        cached = int(start.get("cache_read_input_tokens") or 0)
        written = int(start.get("cache_creation_input_tokens") or 0)
        prompt = int(start.get("input_tokens") or 0) + cached + written
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.output_tokens,
            "total_tokens": prompt + self.output_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        }


def _call_id(block: JSON) -> str:
    """The tool call id: a generated `toolu_` id becomes `call_`, a given one is kept."""
    given = str(block.get("id") or "")
    return "call_" + given.removeprefix("toolu_") if given.startswith("toolu_") else given


def _completion(served: Served, body: JSON) -> JSON | None:
    """The whole answer as one `chat.completion` (a request without `stream: true`), or
    None when it cannot be one (cut, malformed, an in-stream error): then it is streamed,
    as the Messages route does."""
    if served.cut_after is not None:
        return None
    chunks: list[JSON] = []
    for frame in itertools.chain.from_iterable(_Translator(served, body, True).frames()):
        if frame == DONE:
            continue
        if not isinstance(frame, dict) or "choices" not in frame:
            return None
        chunks.append(frame)
    return _fold(chunks) if chunks else None


def _fold(chunks: list[JSON]) -> JSON:
    """Chunks folded into the completion they stream."""
    message: JSON = {"role": "assistant", "content": None}
    finish: str | None = None
    usage: JSON | None = None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk["choices"]:
            _merge(message, choice["delta"])
            finish = choice.get("finish_reason") or finish
    message["content"] = message["content"] or None  # a tool-only answer has null content
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    head = {key: chunks[0][key] for key in ("id", "created", "model")}
    return {**head, "object": "chat.completion", "choices": [choice], "usage": usage}


def _merge(message: JSON, delta: JSON) -> None:
    for key in ("content", "reasoning_content", "reasoning"):
        if delta.get(key) is not None:
            message[key] = (message.get(key) or "") + delta[key]
    for call in delta.get("tool_calls") or ():
        calls: list[Any] = message.setdefault("tool_calls", [])
        if "id" in call:
            calls.append({**call, "function": dict(call["function"])})
            del calls[-1]["index"]
        else:
            calls[call["index"]]["function"]["arguments"] += call["function"]["arguments"]
