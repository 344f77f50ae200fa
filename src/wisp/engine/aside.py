"""Model calls beside the conversation: a host's side question, a session title.

They read the conversation (or a description) and answer in text; no tool runs, nothing
is added to the history or the transcript, and their usage counts towards the session's
cost like any call.
"""

from __future__ import annotations

from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.session import append_user
from wisp.jsontypes import JSON
from wisp.models.accumulate import accumulate
from wisp.models.base import ModelRequest

SIDE_NOTE = ("Answer this side question about the conversation above briefly. It is not "
             "part of the task: do not call tools and do not continue the work.\n\n")
TITLE_REQUEST = ("Write a short title (at most 6 words, no quotes, no final period) for a "
                 "coding session about the following. Reply with the title only.\n\n")


async def ask_aside(ctx: RunContext, messages: list[JSON], max_tokens: int = 2048) -> str:
    """The model's text answer to `messages` (which end with a user turn), with the
    session's system prompt and no tools. Raises ModelAPIError as any call does."""
    request = ModelRequest(model=ctx.session.model, messages=messages, max_tokens=max_tokens,
                           system=ctx.config.system_blocks,
                           session_id=ctx.session.session_id)
    snapshot: JSON | None = None
    async with ctx.model.stream(request) as stream:
        async for event in stream:
            snapshot = accumulate(snapshot, event)
    if snapshot is None:
        return ""
    ctx.session.usage.add(str(snapshot.get("model") or ctx.session.model),
                          snapshot.get("usage") or {})
    return "".join(b.get("text", "") for b in snapshot.get("content", [])
                   if b.get("type") == "text").strip()


async def side_answer(ctx: RunContext, question: str, history: list[Any] | None) -> str:
    """The conversation so far (or the host's `history`), then the question."""
    messages = [dict(m) for m in (history if history else ctx.session.history)
                if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    append_user(messages, SIDE_NOTE + question)
    return await ask_aside(ctx, messages)


async def session_title(ctx: RunContext, description: str | None) -> str:
    """A title for `description`, else for the session's first prompt."""
    about = description or _first_prompt(ctx.session.history)
    title = await ask_aside(ctx, [{"role": "user", "content": TITLE_REQUEST + about}], 64)
    return title.splitlines()[0].strip().strip('"').rstrip(".") if title else ""


def _first_prompt(history: list[JSON]) -> str:
    for message in history:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict)
                 and b.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    return "(an empty session)"
