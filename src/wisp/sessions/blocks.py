"""One recorded content block, checked against what the Messages API accepts before a
resumed conversation sends it back.

Above: `repair.py`, which orders and pairs what survives. A transcript is a file anyone
can edit (or craft and hand over): a block of an unknown type, a `tool_use` without a
string id, a field of the wrong type, or one the API does not know would make every
later request of the session fail with a 400. Each block is kept as the API takes it
(only the fields it knows), or dropped with the reason, which the loader reports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from wisp.jsontypes import JSON

Checked = tuple[JSON | None, str | None]  # (the block to send, or None; why not)

# The API's patterns for tool_use ids and tool names.
_ID = re.compile(r"[a-zA-Z0-9_-]{1,256}")
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _text(block: JSON) -> Checked:
    text = block.get("text")
    if not isinstance(text, str):
        return None, "a text block whose text is not a string"
    if not text.strip():
        return None, None  # empty text is left out as a matter of course, not reported
    # Citations are left behind: the text says the same, and a malformed one is a 400.
    return {"type": "text", "text": text}, None


def _source(source: Any) -> JSON | None:
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    if kind == "base64" and isinstance(source.get("data"), str) and source.get(
            "media_type") in _IMAGE_TYPES | {"application/pdf"}:
        return {"type": "base64", "media_type": source["media_type"], "data": source["data"]}
    if kind == "url" and isinstance(source.get("url"), str):
        return {"type": "url", "url": source["url"]}
    if kind == "text" and isinstance(source.get("data"), str):
        return {"type": "text", "media_type": "text/plain", "data": source["data"]}
    return None


def _media(block: JSON) -> Checked:
    kind = str(block["type"])
    source = _source(block.get("source"))
    if source is None or (kind == "image" and source["type"] == "text"):
        return None, f"{_a(kind)} block without a usable source"
    kept: JSON = {"type": kind, "source": source}
    for key in ("title", "context"):
        if kind == "document" and isinstance(block.get(key), str):
            kept[key] = block[key]
    return kept, None


def _tool_use(block: JSON) -> Checked:
    tool_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(tool_id, str) or not _ID.fullmatch(tool_id):
        return None, "a tool_use whose id is missing or not a valid id"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None, "a tool_use whose name is missing or not a valid tool name"
    if not isinstance(tool_input, dict):
        return None, "a tool_use whose input is not an object"
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}, None


def _tool_result(block: JSON) -> Checked:
    tool_id, content = block.get("tool_use_id"), block.get("content", "")
    if not isinstance(tool_id, str) or not _ID.fullmatch(tool_id):
        return None, "a tool_result whose tool_use_id is missing or not a valid id"
    if isinstance(content, list):
        content = _result_content(content)
        if content is None:
            return None, "a tool_result with content blocks the API does not take"
    elif not isinstance(content, str):
        return None, "a tool_result whose content is neither text nor blocks"
    kept: JSON = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if block.get("is_error") is True:
        kept["is_error"] = True
    return kept, None


def _result_content(blocks: list[Any]) -> list[JSON] | None:
    """A tool_result's blocks (text, images, documents), empty text left out; None when
    one is of another kind or malformed."""
    kept: list[JSON] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in ("text", "image", "document"):
            return None
        checked, why = clean_block(block, "user")
        if why is not None:
            return None
        if checked is not None:
            kept.append(checked)
    return kept


def _thinking(block: JSON) -> Checked:
    if not isinstance(block.get("thinking"), str) or not isinstance(block.get("signature"), str):
        return None, "a thinking block without its text and signature"
    return {"type": "thinking", "thinking": block["thinking"],
            "signature": block["signature"]}, None


def _redacted(block: JSON) -> Checked:
    if not isinstance(block.get("data"), str):
        return None, "a redacted_thinking block without its data"
    return {"type": "redacted_thinking", "data": block["data"]}, None


_CHECKS: dict[str, tuple[str, Callable[[JSON], Checked]]] = {
    "text": ("any", _text),
    "image": ("user", _media),
    "document": ("user", _media),
    "tool_result": ("user", _tool_result),
    "tool_use": ("assistant", _tool_use),
    "thinking": ("assistant", _thinking),
    "redacted_thinking": ("assistant", _redacted),
}


def clean_block(block: JSON, role: str) -> Checked:
    """`block` as the API takes it in a message of `role`, or (None, why not)."""
    kind = block.get("type")
    known = _CHECKS.get(kind) if isinstance(kind, str) else None
    if known is None or not isinstance(kind, str):
        return None, f"a block of unknown type {str(kind)[:40]!r}"
    where, check = known
    if where not in ("any", role):
        return None, f"{_a(kind)} block in {_a(role)} message"
    return check(block)


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word
