"""Any OpenAI-compatible server's stream → the Anthropic events the engine folds.

One tolerant state machine in front of the fold (`openai-compat-quirks.md` §1A–1E):

- Text streams as it comes; reasoning (`reasoning_content`, `reasoning`,
  `reasoning_details[].text`, or inline `<think>…</think>`, split-safe) becomes thinking
  blocks, without a signature.
- Tool calls are assembled in slots keyed by `index`, by `id` when the index is missing or
  reused for a new call, and by the open slot otherwise; a name is taken only when
  non-empty; arguments may be fragments, one chunk, or an object. They are emitted as
  complete `tool_use` blocks when the stream ends cleanly, never before, so a cut stream
  never runs a half-built call. Arguments that are not JSON reach the engine as such and
  the call does not run.
- The stop reason comes from the content: any tool call means `tool_use` (servers say
  `stop`, `tool_call`, `eos`, …); `length` means `max_tokens`.
- Usage is the last non-null usage object (replaced, never summed), read after the
  finish chunk; without any, it is estimated from sizes.
- The end: `[DONE]`, or EOF after a finish_reason. EOF with neither raises a retryable
  error (the preset may allow it). A turn with reasoning and nothing else is retried.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from wisp.errors import RetryableAPIError, StreamCutError
from wisp.jsontypes import JSON
from wisp.models.openai import text_calls
from wisp.models.openai.presets import Compat

OPEN_TAG, CLOSE_TAG = "<think>", "</think>"
_STOP_REASONS = {"length": "max_tokens", "max_tokens": "max_tokens",
                 "content_filter": "refusal"}


class ThinkSplitter:
    """Splits content into (kind, text) runs at `<think>` tags, holding back a partial tag
    at the end of a delta until the next one shows what it is."""

    def __init__(self, implicit_open: bool) -> None:
        self.thinking = implicit_open
        self._held = ""
        self._strip_next = False

    def feed(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        buf = self._held + text
        self._held = ""
        while buf:
            tag = CLOSE_TAG if self.thinking else OPEN_TAG
            at = buf.find(tag)
            stray = -1 if self.thinking else buf.find(CLOSE_TAG)
            if stray >= 0 and (at < 0 or stray < at):  # a close with no open: drop the tag
                self._emit(out, buf[:stray])
                buf = buf[stray + len(CLOSE_TAG):]
                continue
            if at >= 0:
                self._emit(out, buf[:at])
                buf = buf[at + len(tag):]
                self.thinking = not self.thinking
                self._strip_next = not self.thinking
                continue
            keep = _partial_suffix(buf, (tag, CLOSE_TAG))
            self._emit(out, buf[: len(buf) - keep])
            self._held = buf[len(buf) - keep:]
            break
        return out

    def flush(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        self._emit(out, self._held)
        self._held = ""
        return out

    def _emit(self, out: list[tuple[str, str]], text: str) -> None:
        if self._strip_next and not self.thinking:
            text = text.lstrip()
            if text:
                self._strip_next = False
        if text:
            out.append(("thinking" if self.thinking else "text", text))


def _partial_suffix(buf: str, tags: tuple[str, ...]) -> int:
    """The length of the longest end of `buf` that could begin one of `tags`."""
    best = 0
    for tag in tags:
        for n in range(min(len(tag) - 1, len(buf)), 0, -1):
            if tag.startswith(buf[-n:]):
                best = max(best, n)
                break
    return best


class _Slot:
    __slots__ = ("args", "name", "obj", "wire_id")

    def __init__(self) -> None:
        self.wire_id = ""
        self.name = ""
        self.args: list[str] = []
        self.obj: Any = None

    def arguments(self) -> str:
        if self.obj is not None:
            return json.dumps(self.obj, ensure_ascii=False)
        text = "".join(self.args).strip()
        return text or "{}"  # quirk 9: no arguments at all is an empty object


class Normaliser:
    def __init__(self, compat: Compat, model: str, used_ids: set[str],
                 request_chars: int = 0) -> None:
        self.compat = compat
        self.model = model
        self.used_ids = used_ids  # tool ids given out earlier in this session
        self.request_chars = request_chars
        self.splitter = ThinkSplitter(compat.think_implicit_open) if compat.think_tags else None
        self._index = -1  # of the open text/thinking block
        self._open: str | None = None  # its kind
        self._started = False
        self._slots: list[_Slot] = []
        self._by_index: dict[int, _Slot] = {}
        self._by_id: dict[str, _Slot] = {}
        self.finish_reason: str | None = None
        self.usage: JSON | None = None
        self._chars = {"text": 0, "thinking": 0}
        self._texts: list[str] = []  # the answer's text, for tool calls written into it
        self._hold_text = bool(compat.text_tool_call_fallback)
        self.message_id = ""

    # Feeding ----------------------------------------------------------------------------

    def feed(self, chunk: JSON) -> list[JSON]:
        out: list[JSON] = []
        if not self._started:
            out.append(self._message_start(chunk))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage  # quirk 28: replace, never sum; null usage is skipped
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None  # quirk 29
        if not isinstance(choice, dict):
            return out
        delta = choice.get("delta") or choice.get("message") or {}
        if isinstance(delta, dict):
            self._delta(delta, out)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        return out

    def _delta(self, delta: JSON, out: list[JSON]) -> None:
        reasoning = _reasoning_text(delta)
        if reasoning:
            self._text("thinking", reasoning, out)
        content = delta.get("content")
        if isinstance(content, str) and content:
            runs = self.splitter.feed(content) if self.splitter else [("text", content)]
            for kind, text in runs:
                self._text(kind, text, out)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_delta(call)

    def _text(self, kind: str, text: str, out: list[JSON]) -> None:
        if kind == "text":
            self._texts.append(text)
            if self._hold_text:
                return  # read for tool calls at the end (quirk 11)
        self._emit_text(kind, text, out)

    def _emit_text(self, kind: str, text: str, out: list[JSON]) -> None:
        if self._open != kind:
            self._close(out)
            self._index += 1
            self._open = kind
            block = {"type": "text", "text": ""} if kind == "text" else {
                "type": "thinking", "thinking": "", "signature": ""}
            out.append({"type": "content_block_start", "index": self._index,
                        "content_block": block})
        self._chars[kind] += len(text)
        delta = {"type": "text_delta", "text": text} if kind == "text" else {
            "type": "thinking_delta", "thinking": text}
        out.append({"type": "content_block_delta", "index": self._index, "delta": delta})

    def _close(self, out: list[JSON]) -> None:
        if self._open is not None:
            out.append({"type": "content_block_stop", "index": self._index})
            self._open = None

    def _tool_delta(self, call: JSON) -> None:
        slot = self._slot_for(call)
        raw = call.get("function")
        function: JSON = raw if isinstance(raw, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name:
            slot.name = name  # quirk 6: only a non-empty name counts
        args = function.get("arguments")
        if isinstance(args, dict | list):
            slot.obj = args  # quirk 1
        elif isinstance(args, str):
            slot.args.append(args)

    def _slot_for(self, call: JSON) -> _Slot:
        """Quirks 3–5: which call a fragment belongs to."""
        index, wire_id = call.get("index"), call.get("id")
        wire_id = wire_id if isinstance(wire_id, str) else ""
        slot: _Slot | None = None
        if isinstance(index, int) and not isinstance(index, bool):
            slot = self._by_index.get(index)
            if slot is not None and wire_id and slot.wire_id and wire_id != slot.wire_id:
                slot = None  # a new call reusing the index
        elif wire_id:
            slot = self._by_id.get(wire_id)
        elif self._slots:
            slot = self._slots[-1]
        if slot is None:
            slot = _Slot()
            self._slots.append(slot)
            if isinstance(index, int):
                self._by_index[index] = slot
        if wire_id and not slot.wire_id:
            slot.wire_id = wire_id
            self._by_id[wire_id] = slot
        return slot

    # Ending -----------------------------------------------------------------------------

    def finish(self, done: bool) -> list[JSON]:
        """The stream ended: `done` when `[DONE]` arrived, else at EOF."""
        if not done and self.finish_reason is None and not self.compat.allow_missing_done:
            raise StreamCutError("The stream ended before the server finished the message")
        out: list[JSON] = [] if self._started else [self._message_start({})]
        if self.splitter is not None:
            for kind, text in self.splitter.flush():
                self._text(kind, text, out)
        self._calls_in_text(out)
        if not self._slots and not self._chars["text"] and self._chars["thinking"] and (
                _STOP_REASONS.get(self.finish_reason or "") != "max_tokens"):
            raise RetryableAPIError("The model answered with reasoning only and no text or "
                                    "tool call")  # quirk 26: never end a turn on nothing
        self._close(out)
        for slot in self._slots:
            out.extend(self._tool_block(slot))
        out.append({"type": "message_delta", "delta": {"stop_reason": self._stop_reason(),
                                                        "stop_sequence": None},
                    "usage": self._usage()})
        out.append({"type": "message_stop"})
        return out

    def _calls_in_text(self, out: list[JSON]) -> None:
        """Quirk 11: with the fallback on, the held text is read for tool calls; with it
        off, text that looks like one earns a warning (once)."""
        text = "".join(self._texts)
        if self._hold_text:
            rest, calls = (text, []) if self._slots else text_calls.parse(
                text, self.compat.text_tool_call_fallback)
            if rest:
                self._emit_text("text", rest, out)
            for name, arguments in calls:
                slot = _Slot()
                slot.name, slot.obj = name, arguments
                self._slots.append(slot)
        elif not self._slots and text_calls.LOOKS_LIKE_A_CALL.search(text):
            _warn_text_calls()

    def _tool_block(self, slot: _Slot) -> list[JSON]:
        self._index += 1
        block = {"type": "tool_use", "id": self._tool_id(slot.wire_id), "name": slot.name,
                 "input": {}}
        return [{"type": "content_block_start", "index": self._index, "content_block": block},
                {"type": "content_block_delta", "index": self._index,
                 "delta": {"type": "input_json_delta", "partial_json": slot.arguments()}},
                {"type": "content_block_stop", "index": self._index}]

    def _tool_id(self, wire_id: str) -> str:
        """The server's id, unless it is empty or was given out before in this session
        (quirks 5 and 7): then a fresh one. The request builder keeps wire ids unique."""
        tool_id = wire_id
        if not tool_id or tool_id in self.used_ids:
            tool_id = "call_" + secrets.token_hex(12)
        self.used_ids.add(tool_id)
        return tool_id

    def _stop_reason(self) -> str:
        if self._slots:
            return "tool_use"  # quirk 12: whatever finish_reason says
        return _STOP_REASONS.get(self.finish_reason or "", "end_turn")

    def _usage(self) -> JSON:
        usage = self.usage or {}
        prompt = _int(usage.get("prompt_tokens"))
        completion = _int(usage.get("completion_tokens"))
        details = usage.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        if not usage:  # quirk 27: none came; estimate so context accounting still works
            prompt = self.request_chars // 4
            completion = (self._chars["text"] + self._chars["thinking"]) // 4
        return {"input_tokens": max(0, prompt - cached), "output_tokens": completion,
                "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}

    def _message_start(self, chunk: JSON) -> JSON:
        self._started = True
        self.message_id = str(chunk.get("id") or "msg_" + secrets.token_hex(12))
        message: JSON = {"id": self.message_id, "type": "message", "role": "assistant",
                   "model": self.model, "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
        return {"type": "message_start", "message": message}


_WARNED: list[bool] = []


def _warn_text_calls() -> None:
    if not _WARNED:
        from wisp.diagnostics import warn

        _WARNED.append(True)
        warn("wisp: warning: the model wrote a tool call as text instead of calling the tool. "
             "The server probably needs tool support turned on (llama.cpp: --jinja; vLLM: "
             "--enable-auto-tool-choice --tool-call-parser …), or set the provider's "
             "compat.text_tool_call_fallback to [\"hermes_xml\", \"qwen_xml\", \"json\"].\n")


def _reasoning_text(delta: JSON) -> str:
    """Quirk 21, in order: reasoning_content, reasoning, reasoning_details[].text."""
    for key in ("reasoning_content", "reasoning"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    details = delta.get("reasoning_details")
    if isinstance(details, list):
        return "".join(str(d.get("text", "")) for d in details
                       if isinstance(d, dict) and isinstance(d.get("text"), str))
    return ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def completion_as_chunk(body: JSON) -> JSON:
    """Quirk 19: a whole `chat.completion` where a stream was asked for, as one chunk."""
    choices = []
    for choice in body.get("choices") or []:
        if isinstance(choice, dict):
            message: JSON = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [{**c, "index": i} for i, c in enumerate(calls)
                                         if isinstance(c, dict)]
            choices.append({"index": 0, "delta": message,
                            "finish_reason": choice.get("finish_reason")})
    return {"id": body.get("id"), "choices": choices[:1], "usage": body.get("usage")}
