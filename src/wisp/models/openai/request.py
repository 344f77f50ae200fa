"""A Chat Completions request body from the engine's Anthropic-shaped `ModelRequest`.

The history is Anthropic's: user turns mix `tool_result` blocks with text and images,
assistant turns mix thinking, text and `tool_use`. Chat Completions wants one `tool`
message per result, assistant `tool_calls`, the system prompt as a message, and only the
fields a server accepts. What a server accepts is its `Compat` (presets.py); every rule
below names the quirk it answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wisp.jsonsafe import scrub_surrogates
from wisp.jsontypes import JSON
from wisp.models.base import ModelRequest
from wisp.models.openai.presets import Compat
from wisp.models.openai.schema import tool_parameters

IMAGE_STUB = "[image omitted: the model does not take image input]"
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def chat_body(request: ModelRequest, compat: Compat, entry: JSON) -> JSON:
    if isinstance(entry.get("vision"), bool) and entry["vision"] != compat.vision:
        compat = compat.with_overrides({"vision": entry["vision"]}, "model entry")
    ids = WireIds(compat.tool_id_style)
    messages = _system(request, compat) + _history(request.messages, compat, ids)
    if compat.system_role == "none":
        messages = _fold_system(messages)
    body: JSON = {"model": str(entry.get("api_id") or request.model), "messages": messages,
                  "stream": True}
    _max_tokens(body, compat, request.max_tokens)
    if compat.stream_usage != "none":  # quirk 27: only ever together with stream: true
        body["stream_options"] = {"include_usage": True}
        if compat.stream_usage == "continuous":
            body["stream_options"]["continuous_usage_stats"] = True
    if request.tools:
        body["tools"] = [_tool(t, compat.schema_mode) for t in request.tools]
        if compat.send_parallel_tool_calls:
            body["parallel_tool_calls"] = True
    _sampling(body, entry)
    _reasoning_request(body, request, entry)
    body.update(compat.extra_body)
    if isinstance(entry.get("extra_body"), dict):
        body.update(entry["extra_body"])
    return body


def _max_tokens(body: JSON, compat: Compat, max_tokens: int) -> None:
    field = compat.max_tokens_field  # quirk 37
    if field in ("max_tokens", "both"):
        body["max_tokens"] = max_tokens
    if field in ("max_completion_tokens", "both"):
        body["max_completion_tokens"] = max_tokens


def _sampling(body: JSON, entry: JSON) -> None:
    """Sampling parameters only when the model's settings entry sets them (quirk 41)."""
    for key in ("temperature", "top_p"):
        value = entry.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            body[key] = value


def _reasoning_request(body: JSON, request: ModelRequest, entry: JSON) -> None:
    """The session's thinking on/off, through the model entry's `reasoning.request` table
    (quirk 25: every server family spells it differently)."""
    reasoning = entry.get("reasoning")
    table = reasoning.get("request") if isinstance(reasoning, dict) else None
    if not isinstance(table, dict):
        return
    enabled = bool(request.thinking and request.thinking.get("type") == "enabled")
    extra = table.get("on" if enabled else "off")
    if isinstance(extra, dict):
        body.update(extra)


def _tool(tool: JSON, schema_mode: str) -> JSON:
    function: JSON = {"name": tool.get("name"),
                      "parameters": tool_parameters(tool.get("input_schema") or {}, schema_mode)}
    if tool.get("description"):
        function["description"] = tool["description"]
    if schema_mode == "openai_strict":
        function["strict"] = True
    return {"type": "function", "function": function}


# The system prompt ------------------------------------------------------------------------


def _system(request: ModelRequest, compat: Compat) -> list[JSON]:
    """One system message, first (quirk 31)."""
    text = "\n\n".join(_clean(str(b.get("text", ""))) for b in request.system
                       if isinstance(b, dict) and b.get("text"))
    if not text:
        return []
    role = "system" if compat.system_role == "none" else compat.system_role
    return [{"role": role, "content": text}]


def _fold_system(messages: list[JSON]) -> list[JSON]:
    """`system_role: none` (quirk 30): the system text opens the first user message."""
    if not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], messages[1:]
    for message in rest:
        if message["role"] == "user":
            message["content"] = _join(system, message["content"])
            return rest
    return [{"role": "user", "content": system}, *rest]


# The history --------------------------------------------------------------------------------


def _history(history: list[JSON], compat: Compat, ids: WireIds) -> list[JSON]:
    out: list[JSON] = []
    names: dict[str, str] = {}  # tool_use id → tool name, for `name` on tool messages
    for message in history:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            [b for b in content if isinstance(b, dict)] if isinstance(content, list) else [])
        if message.get("role") == "assistant":
            _assistant(out, blocks, compat, ids, names)
        else:
            _user(out, blocks, compat, ids, names)
    return out


def _assistant(out: list[JSON], blocks: list[JSON], compat: Compat, ids: WireIds,
               names: dict[str, str]) -> None:
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    reasoning = "".join(str(b.get("thinking", "")) for b in blocks if b.get("type") == "thinking")
    calls = []
    for block in blocks:
        if block.get("type") == "tool_use":
            names[str(block.get("id"))] = str(block.get("name"))
            calls.append({"id": ids.wire(str(block.get("id"))), "type": "function",
                          "function": {"name": block.get("name"),
                                       "arguments": json.dumps(block.get("input") or {},
                                                               ensure_ascii=False)}})
    if not text and not calls:
        return  # an empty turn (an interrupted one): nothing a server would accept
    message: JSON = {"role": "assistant"}
    if text:
        message["content"] = _clean(text)
    else:
        _empty_content(message, compat)
    if calls:
        message["tool_calls"] = calls
    if reasoning and _echo(compat, bool(calls)):
        message[compat.reasoning_echo_field] = (
            [{"type": "reasoning.text", "text": reasoning}]
            if compat.reasoning_echo_field == "reasoning_details" else reasoning)
    out.append(message)


def _empty_content(message: JSON, compat: Compat) -> None:
    """Assistant content beside tool_calls with no text (quirk 34)."""
    if compat.empty_assistant_content == "null":
        message["content"] = None
    elif compat.empty_assistant_content == "empty_string":
        message["content"] = ""


def _echo(compat: Compat, has_calls: bool) -> bool:
    """Whether this turn's reasoning goes back (quirk 23); never where it is rejected (24)."""
    if not compat.send_reasoning:
        return False
    return compat.reasoning_echo == "all" or (compat.reasoning_echo == "tool_turns"
                                              and has_calls)


def _user(out: list[JSON], blocks: list[JSON], compat: Compat, ids: WireIds,
          names: dict[str, str]) -> None:
    parts: list[JSON] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            out.append(_tool_message(block, compat, ids, names))
        elif kind == "text":
            parts.append({"type": "text", "text": _clean(str(block.get("text", "")))})
        elif kind == "image":
            parts.append(_image(block, compat))
    if not parts:
        return
    if out and out[-1]["role"] == "tool" and compat.tool_then_user == "insert_assistant":
        out.append({"role": "assistant", "content": "Done."})  # quirk 32 (Mistral)
    content = _content(parts, compat)
    if out and out[-1]["role"] == "user":  # never two user messages in a row (quirk 32)
        out[-1]["content"] = _join(out[-1]["content"], content)
    else:
        out.append({"role": "user", "content": content})


def _tool_message(block: JSON, compat: Compat, ids: WireIds, names: dict[str, str]) -> JSON:
    tool_use_id = str(block.get("tool_use_id"))
    text = _result_text(block.get("content"))
    if block.get("is_error"):
        text = f"Error: {text}"  # no wire field for it
    message: JSON = {"role": "tool", "tool_call_id": ids.wire(tool_use_id),
                     "content": _clean(text)}
    if compat.tool_message_name and tool_use_id in names:  # quirk 33
        message["name"] = names[tool_use_id]
    return message


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "image":
            texts.append(IMAGE_STUB)  # tool messages are strings on most servers
    return "\n".join(texts)


def _image(block: JSON, compat: Compat) -> JSON:
    source = block.get("source") or {}
    if not compat.vision or source.get("type") != "base64":
        return {"type": "text", "text": IMAGE_STUB}  # quirk 35; the history keeps the image
    url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _content(parts: list[JSON], compat: Compat) -> str | list[JSON]:
    """A plain string when there is only text (quirk 35), unless the preset wants arrays."""
    only_text = all(p["type"] == "text" for p in parts)
    if compat.content_format == "always_array" or (not only_text and
                                                   compat.content_format != "always_string"):
        return parts
    return "\n\n".join(str(p.get("text", "")) for p in parts if p["type"] == "text")


def _join(first: str | list[JSON], second: str | list[JSON]) -> str | list[JSON]:
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    as_parts = [{"type": "text", "text": x} if isinstance(x, str) else None
                for x in (first, second)]
    left = [as_parts[0]] if as_parts[0] else list(first)
    right = [as_parts[1]] if as_parts[1] else list(second)
    return [*left, *right]


def _clean(text: str) -> str:
    return scrub_surrogates(text)  # quirk 48: strict servers 400 on lone surrogates


class WireIds:
    """Tool-call ids as the server will accept them (quirk 8), one to one: `safe` keeps
    `[A-Za-z0-9_-]`, `alnum9` makes nine alphanumerics; a collision gets a fresh one."""

    def __init__(self, style: str) -> None:
        self.style = style
        self._wire: dict[str, str] = {}
        self._used: set[str] = set()

    def wire(self, internal: str) -> str:
        known = self._wire.get(internal)
        if known is not None:
            return known
        candidate = self._shape(internal, 0)
        n = 0
        while candidate in self._used:
            n += 1
            candidate = self._shape(internal, n)
        self._wire[internal] = candidate
        self._used.add(candidate)
        return candidate

    def _shape(self, internal: str, n: int) -> str:
        if self.style == "passthrough":
            return internal if n == 0 else f"{internal}_{n}"
        if self.style == "safe":
            base = _SAFE_ID.sub("_", internal) or "call"
            return base if n == 0 else f"{base}_{n}"
        import hashlib

        digest = hashlib.sha256(f"{internal}#{n}".encode()).hexdigest()
        letters = "".join(c for c in digest if c.isalnum())
        return letters[:9]
