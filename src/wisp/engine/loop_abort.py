"""How the agent loop ends an interrupted run: a base class of `AgentLoop`, and the notes
the model and the user read of an interrupt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.engine.events import Interrupted, ToolResultReady
from wisp.engine.model_call import close_abandoned, flush_aborted
from wisp.engine.outcome import Aborted, Outcome
from wisp.engine.session import append_user
from wisp.jsontypes import JSON
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.engine.context import RunContext
    from wisp.engine.model_call import ModelCaller
    from wisp.engine.outcome import RunState

INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_TOOLS = "[Request interrupted by user for tool use]"
# What the model reads for a tool call an interrupt cut short: it may have run in part.
INTERRUPTED_TOOL_RESULT = ("The user interrupted this tool call while it was running, so it "
                           "may have run in part or not at all. Do not retry it; wait for the "
                           "user's next instruction.")


class LoopAbort:
    """A base class of `AgentLoop` (which sets what is declared here)."""

    ctx: RunContext
    state: RunState
    caller: ModelCaller
    pending_results: list[JSON]

    def _abort(self) -> Outcome:
        """Ends an interrupted run as docs/protocol.md "Interrupts" describes: the partial
        block flagged `aborted`, a tool_result for every tool_use left unanswered, the
        interruption note, then the closing stream events. The partial text stays in the
        history, so the next prompt knows what the model had said."""
        ctx, state = self.ctx, self.state
        ctx.session.processes.kill_all()
        attempt = self.caller.current if state.phase == "streaming" else None
        history = ctx.session.history
        if attempt is not None:
            self.caller.record_partial_usage(attempt)  # the input tokens were billed
            partial = flush_aborted(ctx, attempt)
            kept = [b for b in [*attempt.shown, *partial]
                    if b.get("type") == "text" and str(b.get("text", "")).strip()]
            if kept:
                ctx.session.add_assistant({**(attempt.snapshot or {}), "content": kept},
                                          request_id=attempt.request_id)
        text = INTERRUPTED_TOOLS if state.phase == "tools" else INTERRUPTED
        answered = self.pending_results
        unanswered = _unanswered_tool_results(history, answered)
        for block in unanswered:
            meta = {"id": block["tool_use_id"], "non_execution_kind": "user-rejected"}
            ctx.emit(ToolResultReady(block, "User rejected tool use", meta, new_uuid()))
        marker = {"type": "text", "text": text}
        append_user(history, [*answered, *unanswered, marker])
        ctx.session.record_user([*unanswered, marker])  # answered results are on disk
        ctx.emit(Interrupted(text))
        if attempt is not None:
            close_abandoned(ctx, attempt)
        return Aborted(state.phase)


def _unanswered_tool_results(history: list[JSON], answered: list[JSON]) -> list[JSON]:
    """tool_result blocks for tool_use ids the interrupt left unanswered, so the history
    stays valid for the next request."""
    if not history or history[-1].get("role") != "assistant":
        return []
    done = {r.get("tool_use_id") for r in answered}
    content = history[-1].get("content") or []
    return [{"type": "tool_result", "tool_use_id": b.get("id"), "is_error": True,
             "content": INTERRUPTED_TOOL_RESULT}
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") not in done]
