"""Where the agent loop fires hooks, and the common input every hook receives."""

from __future__ import annotations

from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.session import append_user
from wisp.hooks.model import HookEvent, HookOutcome

JSON = dict[str, Any]


def hook_input(ctx: RunContext, event: HookEvent, **fields: Any) -> JSON:
    session = ctx.session
    return {
        "session_id": session.session_id,
        "transcript_path": session.transcript_path or "",
        "cwd": str(session.cwd),
        "permission_mode": session.permission_mode,
        "hook_event_name": event,
        **fields,
    }


async def fire(ctx: RunContext, event: HookEvent, *, target: str | None = None,
               **fields: Any) -> HookOutcome:
    """Runs `event`'s hooks. `target` is what matchers test (the tool name); a
    `tool_use_id` field is also passed to SDK callbacks alongside the input."""
    runner = ctx.hooks
    if runner is None or not runner.has(event):
        return HookOutcome()
    tool_use_id = fields.get("tool_use_id")
    return await runner.run(event, hook_input(ctx, event, **fields), target=target,
                            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None)


async def session_start(ctx: RunContext, source: str) -> None:
    """SessionStart hooks; what they print becomes context ahead of the first prompt."""
    hooked = await fire(ctx, "SessionStart", source=source)
    if hooked.additional_context:
        append_user(ctx.session.history, "\n".join(hooked.additional_context))


async def session_end(ctx: RunContext, reason: str) -> None:
    await fire(ctx, "SessionEnd", reason=reason)
