"""Automatic compaction: when a conversation nears the model's context window, the older
part is replaced by a model-written summary so the session can go on.

The most recent exchange is kept verbatim (the prompt being answered, or the last tool_use
with its results), so tool_use/tool_result pairs stay intact. The transcript on disk keeps
the full history; a resumed session simply compacts again if it needs to. PreCompact hooks
run first and may veto.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.events import Compacted, CompactionFailed
from wisp.engine.hook_points import fire
from wisp.engine.session import append_user
from wisp.errors import ModelAPIError
from wisp.models import catalog
from wisp.models.accumulate import accumulate
from wisp.models.base import ModelRequest

JSON = dict[str, Any]
DEFAULT_PERCENT = 92

SUMMARY_REQUEST = (
    "Write a summary of the conversation so far that lets you continue the work without "
    "it. Keep: the user's goals and explicit instructions, decisions made and why, files "
    "read or changed (with paths), commands run and their important results, errors met "
    "and how they were handled, and what remains to do. Be specific and concise. Reply "
    "with the summary only; do not call tools."
)
SUMMARY_PREFIX = "This session continues an earlier conversation. Summary of it so far:\n\n"


def threshold_tokens(model: str, env: Mapping[str, str]) -> int:
    explicit = env.get("WISP_AUTOCOMPACT_TOKENS")
    if explicit and explicit.isdigit():
        return int(explicit)
    percent = env.get("WISP_AUTOCOMPACT_PCT") or env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    pct = int(percent) if percent and percent.isdigit() else DEFAULT_PERCENT
    return catalog.context_window(model) * pct // 100


def context_tokens(usage: JSON) -> int:
    """How much of the window the last exchange used: its whole input plus its output."""
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
            "output_tokens")
    return sum(int(usage.get(k) or 0) for k in keys)


def split_tail(history: list[JSON]) -> tuple[list[JSON], list[JSON]]:
    """(head to summarise, tail to keep verbatim)."""
    if not history:
        return [], []
    cut = len(history) - 1
    last = history[-1]
    has_results = isinstance(last.get("content"), list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in last["content"])
    if last.get("role") == "user" and has_results and cut >= 1:
        cut -= 1  # keep the assistant's tool_use with its results
    return history[:cut], history[cut:]


async def maybe_compact(ctx: RunContext, last_usage: JSON | None) -> bool:
    if last_usage is None:
        return False
    used = context_tokens(last_usage)
    if used < threshold_tokens(ctx.session.model, ctx.config.env):
        return False
    return await compact(ctx, "auto", None, used)


async def compact(ctx: RunContext, trigger: str, instructions: str | None, used: int) -> bool:
    """Replaces the history but its latest exchange with a summary. `trigger` is "auto"
    (near the window) or "manual" (/compact, whose `instructions` steer the summary);
    `used` is the context size before, for the report. False when there is too little
    to summarise, a PreCompact hook vetoes, or the model fails (CompactionFailed)."""
    head, tail = split_tail(ctx.session.history)
    if trigger == "manual" and ctx.session.history and ctx.session.history[-1].get(
            "role") == "assistant":
        head, tail = list(ctx.session.history), []  # between turns: all of it
    if len(head) < 2:
        return False
    hooked = await fire(ctx, "PreCompact", trigger=trigger, custom_instructions=instructions)
    if hooked.blocked or hooked.stop:
        return False
    extra = [instructions] if instructions else []
    summary = await _summarise(ctx, head, "\n".join([*extra, *hooked.additional_context]))
    if not summary:
        return False
    history: list[JSON] = [{"role": "user", "content": SUMMARY_PREFIX + summary}]
    for message in tail:
        if message.get("role") == "user":
            append_user(history, message["content"])
        else:
            history.append(message)
    ctx.session.history[:] = history
    ctx.emit(Compacted(trigger, used))
    return True


async def _summarise(ctx: RunContext, head: list[JSON], extra: str) -> str | None:
    messages = [dict(m) for m in head]
    append_user(messages, SUMMARY_REQUEST + (f"\n\n{extra}" if extra else ""))
    config = ctx.config
    tools = [t.api_definition() for t in config.tools.values()] + config.extra_tool_definitions
    request = ModelRequest(model=ctx.session.model, messages=messages, max_tokens=8192,
                           system=config.system_blocks, tools=tools,
                           session_id=ctx.session.session_id)
    snapshot: JSON | None = None
    try:
        async with ctx.model.stream(request) as stream:
            async for event in stream:
                snapshot = accumulate(snapshot, event)
    except ModelAPIError as exc:
        ctx.emit(CompactionFailed(exc.message))
        return None
    if snapshot is None:
        return None
    ctx.session.usage.add(str(snapshot.get("model") or ctx.session.model),
                          snapshot.get("usage") or {})
    text = "".join(b.get("text", "") for b in snapshot.get("content", [])
                   if b.get("type") == "text")
    return text.strip() or None
