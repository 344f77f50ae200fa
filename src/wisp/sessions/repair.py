"""Turns a list of recorded messages into a history the Messages API accepts.

A transcript is not always a valid request: Claude Code writes one message per content
block, a crash can leave a tool_use without its result, and a user line may hold results
for calls that are not in the chain. The rules the API enforces, and what is done here:

- roles alternate, starting with a user message: consecutive same-role messages merge,
  leading assistant messages are dropped;
- every tool_use is answered by a tool_result in the next user message: missing results
  become error results (the call may or may not have run; the model is told so);
- a tool_result answers a tool_use of the message just before: stray results are dropped;
- tool_use ids are unique in the conversation: a repeated one is dropped (and so its result);
- no empty text blocks, no empty messages;
- every block is one the API takes, with only the fields it knows (`blocks.py`): others
  are dropped.

What is dropped for being malformed (not empty text, not a result a crash left missing) is
counted by reason in `problems`, for the loader to report.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from wisp.jsontypes import JSON
from wisp.sessions.blocks import clean_block

MISSING_RESULT = (
    "No result was recorded for this tool call: the session stopped before "
    "it finished, so it may or may not have run."
)


def _blocks(content: Any, role: str, problems: Counter[str]) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        problems["a message whose content is neither text nor a list of blocks"] += 1
        return []
    kept: list[JSON] = []
    for block in content:
        checked, why = clean_block(block, role) if isinstance(block, dict) else (
            None, "a content block that is not an object")
        if checked is not None:
            kept.append(checked)
        elif why is not None:
            problems[why] += 1
    return kept


def _unique_calls(blocks: list[JSON], seen: set[str], problems: Counter[str]) -> list[JSON]:
    """An assistant message's blocks without a tool_use whose id was used before."""
    kept: list[JSON] = []
    for block in blocks:
        if block["type"] == "tool_use":
            if block["id"] in seen:
                problems["a tool_use whose id repeats an earlier one"] += 1
                continue
            seen.add(block["id"])
        kept.append(block)
    return kept


def _tool_use_ids(message: JSON | None) -> list[str]:
    if message is None or message["role"] != "assistant":
        return []
    return [str(b["id"]) for b in message["content"] if b["type"] == "tool_use"]


def _push(out: list[JSON], role: str, blocks: list[JSON]) -> None:
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    elif out or role == "user":
        out.append({"role": role, "content": list(blocks)})


def _answer(calls: list[str], blocks: list[JSON], problems: Counter[str]) -> list[JSON]:
    """The user blocks after an assistant message: one result per call, results first."""
    results: dict[str, JSON] = {}
    others: list[JSON] = []
    for block in blocks:
        if block["type"] != "tool_result":
            others.append(block)
        elif block["tool_use_id"] not in calls:
            problems["a tool_result that answers no tool_use just before it"] += 1
        elif block["tool_use_id"] in results:
            problems["a second tool_result for one tool_use"] += 1
        else:
            results[block["tool_use_id"]] = block
    answered = [
        results.get(i)
        or {"type": "tool_result", "tool_use_id": i, "content": MISSING_RESULT, "is_error": True}
        for i in calls
    ]
    return [*answered, *others]


def repair_history(messages: list[JSON], problems: Counter[str] | None = None) -> list[JSON]:
    """A valid API history from recorded messages (each `{"role", "content"}`); what was
    dropped as malformed is counted in `problems`, by reason."""
    problems = Counter() if problems is None else problems
    merged: list[JSON] = []
    seen: set[str] = set()
    for message in messages:
        role = message["role"]
        blocks = _blocks(message.get("content"), role, problems)
        if role == "assistant":
            blocks = _unique_calls(blocks, seen, problems)
        _push(merged, role, blocks)
    out: list[JSON] = []
    for message in merged:
        if message["role"] == "assistant":
            _push(out, "assistant", message["content"])
            continue
        calls = _tool_use_ids(out[-1] if out else None)
        _push(out, "user", _answer(calls, message["content"], problems))
    calls = _tool_use_ids(out[-1] if out else None)
    if calls:
        _push(out, "user", _answer(calls, [], problems))
    return [_simplify(m) for m in out]


def _simplify(message: JSON) -> JSON:
    """A user message that is one plain text block goes back to a string, as it was sent."""
    content = message["content"]
    if message["role"] == "user" and len(content) == 1 and set(content[0]) == {"type", "text"}:
        return {"role": "user", "content": content[0]["text"]}
    return message
