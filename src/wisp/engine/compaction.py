"""Automatic compaction: when a conversation nears the model's context window, the older
part is replaced by a model-written summary so the session can go on.

The most recent exchange is kept verbatim (the prompt being answered, or the last tool_use
with its results), so tool_use/tool_result pairs stay intact. The transcript keeps the full
history and records the boundary as the reference does (a `compact_boundary` line that
starts a new chain, the summary, then the kept exchange again), so a resumed session starts
from the summary. PreCompact hooks run first and may veto.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from wisp.engine.context import RunContext
from wisp.engine.events import Compacted, CompactionFailed, StatusChanged
from wisp.engine.hook_points import fire
from wisp.engine.session import append_user
from wisp.errors import ModelAPIError
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.models.accumulate import accumulate
from wisp.models.base import ModelRequest

DEFAULT_PERCENT = 92

SUMMARY_REQUEST = (
    "Write a summary of the conversation so far that lets you continue the work without "
    "it. Keep: the user's goals and explicit instructions, decisions made and why, files "
    "read or changed (with paths), commands run and their important results, errors met "
    "and how they were handled, and what remains to do. Be specific and concise. Reply "
    "with the summary only; do not call tools."
)
SUMMARY_PREFIX = "This session continues an earlier conversation. Summary of it so far:\n\n"
NOTHING_TO_COMPACT = "No messages to compact"
NO_SUMMARY = "Error during compaction: the model gave no summary"


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
    return await attempt(ctx, trigger, instructions, used) is None


async def attempt(ctx: RunContext, trigger: str, instructions: str | None,
                  used: int) -> str | None:
    """`compact`, saying why not: None when the history was compacted, else the reason
    (`NOTHING_TO_COMPACT`, a hook's veto, the model's failure)."""
    head, tail = split_tail(ctx.session.history)
    if trigger == "manual" and ctx.session.history and ctx.session.history[-1].get(
            "role") == "assistant":
        head, tail = list(ctx.session.history), []  # between turns: all of it
    if len(head) < 2:
        return NOTHING_TO_COMPACT
    started = time.monotonic()
    ctx.emit(StatusChanged("compacting"))
    summary, why, seen = await _summary(ctx, trigger, instructions, head)
    ctx.emit(StatusChanged(None, compact_result="failed" if summary is None else "success"))
    if summary is None:
        return why
    used = used or seen  # no call yet this session (resumed): what the summary call read
    text = SUMMARY_PREFIX + summary
    history: list[JSON] = [{"role": "user", "content": text}]
    for message in tail:
        if message.get("role") == "user":
            append_user(history, message["content"])
        else:
            history.append(message)
    ctx.session.history[:] = history
    duration_ms = round((time.monotonic() - started) * 1000)
    parent = ctx.session.last_message_uuid
    summary_uuid = _record(ctx, trigger, used, duration_ms=duration_ms, summary=text,
                           tail=tail)
    ctx.emit(Compacted(trigger, used, duration_ms=duration_ms, logical_parent=parent,
                       summary=text, summary_uuid=summary_uuid))
    return None


async def _summary(ctx: RunContext, trigger: str, instructions: str | None,
                   head: list[JSON]) -> tuple[str | None, str, int]:
    """(the summary, or None and why there is none; the input tokens the call read)."""
    hooked = await fire(ctx, "PreCompact", trigger=trigger, custom_instructions=instructions)
    if hooked.blocked or hooked.stop:
        why = hooked.reason or hooked.stop_reason
        return None, why or "Compaction was blocked by a PreCompact hook", 0
    extra = [instructions] if instructions else []
    return await _summarise(ctx, head, "\n".join([*extra, *hooked.additional_context]))


def _record(ctx: RunContext, trigger: str, used: int, *, duration_ms: int, summary: str,
            tail: list[JSON]) -> str | None:
    """The boundary, the summary and the kept exchange, in the transcript; the summary
    line's uuid (None without a transcript)."""
    session = ctx.session
    recorder = session.recorder
    if recorder is None:
        return None
    summary_uuid = recorder.compacted(trigger, used, summary, duration_ms)
    session.last_message_uuid = summary_uuid
    for message in tail:
        if message.get("role") == "user":
            session.record_user(message["content"])
        else:
            written = recorder.assistant({"role": "assistant", "type": "message",
                                          "content": message["content"]})
            session.last_message_uuid = written[-1] if written else session.last_message_uuid
    return summary_uuid


async def _summarise(ctx: RunContext, head: list[JSON], extra: str
                     ) -> tuple[str | None, str, int]:
    """(the model's summary, or None and why there is none; the input tokens it read)."""
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
        return None, f"Error during compaction: {exc.message}", 0
    if snapshot is None:
        return None, NO_SUMMARY, 0
    usage = snapshot.get("usage") or {}
    ctx.session.usage.add(str(snapshot.get("model") or ctx.session.model), usage)
    text = "".join(b.get("text", "") for b in snapshot.get("content", [])
                   if b.get("type") == "text")
    return (text.strip() or None), NO_SUMMARY, context_tokens({**usage, "output_tokens": 0})
