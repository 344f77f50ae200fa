"""Turns a list of recorded messages into a history the Messages API accepts.

A transcript is not always a valid request: Claude Code writes one message per content
block, a crash can leave a tool_use without its result, and a user line may hold results
for calls that are not in the chain. The rules the API enforces, and what is done here:

- roles alternate, starting with a user message: consecutive same-role messages merge,
  leading assistant messages are dropped;
- every tool_use is answered by a tool_result in the next user message: missing results
  become error results (the call may or may not have run; the model is told so);
- a tool_result answers a tool_use of the message just before: stray results are dropped;
- no empty text blocks, no empty messages.
"""

from __future__ import annotations

from typing import Any

from wisp.sessions.transcript import api_block

JSON = dict[str, Any]
MISSING_RESULT = (
    "No result was recorded for this tool call: the session stopped before "
    "it finished, so it may or may not have run."
)


def _blocks(content: Any) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [api_block(b) for b in content if isinstance(b, dict) and not _empty_text(b)]


def _empty_text(block: JSON) -> bool:
    return block.get("type") == "text" and not str(block.get("text") or "").strip()


def _tool_use_ids(message: JSON | None) -> list[str]:
    if message is None or message["role"] != "assistant":
        return []
    return [str(b.get("id")) for b in message["content"] if b.get("type") == "tool_use"]


def _push(out: list[JSON], role: str, blocks: list[JSON]) -> None:
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    elif out or role == "user":
        out.append({"role": role, "content": list(blocks)})


def _answer(calls: list[str], blocks: list[JSON]) -> list[JSON]:
    """The user blocks after an assistant message: one result per call, results first."""
    results: dict[str, JSON] = {}
    others: list[JSON] = []
    for block in blocks:
        if block.get("type") != "tool_result":
            others.append(block)
        elif block.get("tool_use_id") in calls and block["tool_use_id"] not in results:
            results[block["tool_use_id"]] = block
    answered = [
        results.get(i)
        or {"type": "tool_result", "tool_use_id": i, "content": MISSING_RESULT, "is_error": True}
        for i in calls
    ]
    return [*answered, *others]


def repair_history(messages: list[JSON]) -> list[JSON]:
    """A valid API history from recorded messages (each `{"role", "content"}`)."""
    merged: list[JSON] = []
    for message in messages:
        _push(merged, message["role"], _blocks(message.get("content")))
    out: list[JSON] = []
    for message in merged:
        if message["role"] == "assistant":
            _push(out, "assistant", message["content"])
            continue
        calls = _tool_use_ids(out[-1] if out else None)
        _push(out, "user", _answer(calls, message["content"]))
    calls = _tool_use_ids(out[-1] if out else None)
    if calls:
        _push(out, "user", _answer(calls, []))
    return [_simplify(m) for m in out]


def _simplify(message: JSON) -> JSON:
    """A user message that is one plain text block goes back to a string, as it was sent."""
    content = message["content"]
    if message["role"] == "user" and len(content) == 1 and set(content[0]) == {"type", "text"}:
        return {"role": "user", "content": content[0]["text"]}
    return message
