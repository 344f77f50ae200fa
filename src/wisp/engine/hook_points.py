"""Where the agent loop fires hooks, and the common input every hook receives."""

from __future__ import annotations

from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.events import Informational
from wisp.engine.session import append_user
from wisp.hooks.model import HookEvent, HookOutcome
from wisp.jsontypes import JSON


def hook_input(ctx: RunContext, event: HookEvent, **fields: Any) -> JSON:
    session = ctx.session
    # Inside a subagent, its hooks say whose they are (`agent_id`, `agent_type`).
    agent = ({"agent_id": ctx.agent_id, "agent_type": ctx.agent_type or ""}
             if ctx.agent_id is not None else {})
    return {
        "session_id": session.session_id,
        "transcript_path": session.transcript_path or "",
        "cwd": str(session.cwd),
        "permission_mode": session.permission_mode,
        **agent,
        "hook_event_name": event,
        **fields,
    }


async def fire(ctx: RunContext, event: HookEvent, *, target: str | None = None,
               **fields: Any) -> HookOutcome:
    """Runs `event`'s hooks. `target` is what matchers test (the tool name); a
    `tool_use_id` field is also passed to SDK callbacks alongside the input. Each
    `systemMessage` is shown to the user as "<hook> says: …"; a `continue: false` is noted
    on `ctx.hook_stop` for the loop."""
    runner = ctx.hooks
    if runner is None or not runner.has(event):
        return HookOutcome()
    tool_use_id = fields.get("tool_use_id")
    outcome = await runner.run(event, hook_input(ctx, event, **fields), target=target,
                               tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None)
    label = f"{event}:{target}" if target else event
    for message in outcome.system_messages:
        ctx.emit(Informational(f"{label} says: {message}", "notice"))
    if outcome.stop:
        ctx.hook_stop = outcome.stop_reason or ""
    return outcome


async def session_start(ctx: RunContext, source: str) -> None:
    """SessionStart hooks; what they print becomes context ahead of the first prompt."""
    hooked = await fire(ctx, "SessionStart", source=source)
    if hooked.additional_context:
        append_user(ctx.session.history, "\n".join(hooked.additional_context))


async def session_end(ctx: RunContext, reason: str) -> None:
    await fire(ctx, "SessionEnd", reason=reason)
