"""The agent loop's hooks and notices: a base class of `AgentLoop`.

UserPromptSubmit hooks may stop or block a prompt or add context to it; Stop (a
subagent's SubagentStop) hooks may keep a finished turn going; hooks that went on in the
background, and background tasks that ended, leave what the next request carries.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from wisp.engine.decide import final_text
from wisp.engine.events import Informational, StopHookSummary
from wisp.engine.hook_points import fire
from wisp.engine.outcome import HookStopped, Outcome, Success
from wisp.hooks.model import HookEvent, HookOutcome
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.engine.context import RunContext


class LoopHooks:
    """A base class of `AgentLoop` (which sets what is declared here)."""

    ctx: RunContext
    origin: JSON | None
    stop_hook_active: bool

    async def _submit(self, prompt: str | list[JSON], uuid: str | None = None
                      ) -> Outcome | None:
        """UserPromptSubmit hooks may block the prompt or add context to it."""
        text = prompt if isinstance(prompt, str) else " ".join(
            str(b.get("text", "")) for b in prompt if b.get("type") == "text")
        # A subagent's prompt comes from the model, not the user: no UserPromptSubmit.
        hooked = (await fire(self.ctx, "UserPromptSubmit", prompt=text)
                  if self.ctx.parent_tool_use_id is None and self.origin is None
                  else HookOutcome())
        if hooked.stop:
            return self._prompt_stopped(prompt, uuid, hooked.stop_reason)
        if hooked.blocked:
            return self._prompt_blocked(text, hooked.reason)
        self.ctx.session.add_user(prompt, uuid=uuid)
        if hooked.additional_context:
            self.ctx.session.add_user("\n".join(hooked.additional_context))
        return None

    def _prompt_stopped(self, prompt: str | list[JSON], uuid: str | None,
                        reason: str | None) -> Outcome:
        """`continue: false` from a UserPromptSubmit hook: the prompt is kept (with a note
        that it went unanswered), nothing goes to the model, and the run ends well: the
        reference's result is a success whose text is the notice."""
        notice = f"Operation stopped by hook: {reason}" if reason else "Operation stopped by hook"
        self.ctx.session.add_user(prompt, uuid=uuid)
        self.ctx.session.add_user(f"(A hook stopped the prompt above before it was answered. "
                                  f"{notice}.)")
        return self._hook_notice(notice, "stopped_by_hook", True, reason)

    def _prompt_blocked(self, text: str, reason: str | None) -> Outcome:
        """`decision: "block"` (or exit 2) from a UserPromptSubmit hook: the prompt is
        dropped and nothing goes to the model; a successful result says why."""
        notice = (f"UserPromptSubmit operation blocked by hook:\n{reason or 'Blocked by hook'}"
                  f"\n\nOriginal prompt: {text}")
        return self._hook_notice(notice, "blocked_by_hook", False, reason)

    def _hook_notice(self, notice: str, kind: str, kept: bool, reason: str | None) -> Outcome:
        outcome: JSON = {"kind": kind, "prompt_kept": kept}
        if reason:
            outcome["reason"] = reason
        self.ctx.emit(Informational(notice, "warning", {"prevent_continuation": True,
                                                        "prompt_submit_outcome": outcome}))
        return HookStopped(notice, reason=reason or "", terminal_reason=None)

    async def _stop_hooks(self, message: JSON) -> Outcome | None:
        """Stop hooks may block the stop: their reason goes to the model and the loop goes on."""
        event: HookEvent = "SubagentStop" if self.ctx.parent_tool_use_id else "Stop"
        agent = ({"agent_transcript_path": self.ctx.agent_transcript_path or ""}
                 if event == "SubagentStop" else {})
        started = time.monotonic()
        hooked = await fire(self.ctx, event, stop_hook_active=self.stop_hook_active,
                            last_assistant_message=final_text(message), **agent)
        if hooked.ran:
            self.ctx.emit(StopHookSummary(
                event, hooked.ran, hooked.errors, hooked.additional_context,
                prevented=hooked.stop, stop_reason=hooked.stop_reason,
                duration_ms=round((time.monotonic() - started) * 1000)))
        if hooked.stop:
            return HookStopped(final_text(message), reason=hooked.stop_reason or "",
                               terminal_reason="stop_hook_prevented")
        if hooked.blocked:
            self.stop_hook_active = True
            self.ctx.session.add_user(hooked.reason or "A Stop hook asked to continue.")
            return None
        return Success(final_text(message))

    def _deliver_notices(self) -> None:
        """Background tasks that ended since the last model call: the model is told now,
        in the user message this call sends (the main thread only)."""
        tasks = self.ctx.tasks
        if tasks is None or self.ctx.parent_tool_use_id is not None or not tasks.notices:
            return
        for notice in tasks.take_notices():
            self.ctx.session.add_user(notice.text)

    def _deliver_background_hooks(self) -> None:
        """Hooks that went on in the background and have ended: the model reads their
        context in this request, the user sees their message (`wisp.hooks.background`)."""
        hooks = self.ctx.hooks
        if hooks is None or self.ctx.parent_tool_use_id is not None:
            return
        for name, answer in hooks.background.take():
            outcome = HookOutcome()
            outcome.merge(answer, name.split(":", 1)[0])
            for message in outcome.system_messages:
                self.ctx.emit(Informational(f"{name} says: {message}", "notice"))
            if outcome.additional_context:
                self.ctx.session.add_user("\n".join(outcome.additional_context))
