"""ACP content both ways: a prompt's blocks into the model's content, and a session's
history back into the updates an editor shows (`session/load` replays it).

Above: `wisp.acp.agent`. Below: nothing but `wisp.acp.updates`' shapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wisp.acp.updates import plan_update, result_update, text_update, tool_call
from wisp.jsontypes import JSON


def prompt_content(blocks: Any) -> list[JSON]:
    """Text, images, and embedded context (a file the user attached, as the editor holds
    it) as Messages API content. Anything else is named, not dropped silently."""
    if not isinstance(blocks, list):
        raise ValueError("prompt must be a list of content blocks")
    return [_block(b) for b in blocks if isinstance(b, dict)]


def _block(block: JSON) -> JSON:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image" and block.get("data"):
        return {"type": "image", "source": {"type": "base64", "data": block["data"],
                                            "media_type": block.get("mimeType", "image/png")}}
    if kind == "resource":
        res = block.get("resource") or {}
        body = res.get("text") if isinstance(res.get("text"), str) else "(binary content)"
        return {"type": "text",
                "text": f'<context ref="{res.get("uri", "")}">\n{body}\n</context>'}
    if kind in ("resource_link", "image"):
        return {"type": "text", "text": f"@{block.get('uri', '')}"}
    return {"type": "text", "text": f"[{kind} content is not supported]"}


def replay(history: Sequence[JSON], cwd: str) -> Iterator[JSON]:
    """The updates that tell a loaded conversation again, message by message."""
    for message in history:
        role, content = message.get("role"), message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            yield from _replayed(role, block, cwd)


def _replayed(role: Any, block: Any, cwd: str) -> Iterator[JSON]:
    if not isinstance(block, dict):
        return
    kind = block.get("type")
    if kind == "text" and block.get("text"):
        chunk = "agent_message_chunk" if role == "assistant" else "user_message_chunk"
        yield text_update(chunk, str(block["text"]))
    elif kind == "thinking" and block.get("thinking"):
        yield text_update("agent_thought_chunk", str(block["thinking"]))
    elif kind == "tool_use":
        if block.get("name") == "TodoWrite":
            yield plan_update((block.get("input") or {}).get("todos"))
        yield tool_call(block, cwd)
    elif kind == "tool_result":
        yield result_update(block)
