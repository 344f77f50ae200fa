"""The agent loop: call the model, run the tools it asks for, repeat until a stop rule.

Above: the runtime hands in one prompt and gets its typed `Outcome` back; every event,
ending with `RunFinished`, goes to `ctx.sink` as it happens. Below: the model
caller (streaming, retries), the tool runner (permissions, tools) and `decide`.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from wisp.engine.compaction import compact, maybe_compact
from wisp.engine.context import RunContext
from wisp.engine.decide import (
    RECOVERY_PROMPT,
    Finish,
    RecoverMaxTokens,
    RunTools,
    check_limits,
    decide,
    final_text,
)
from wisp.engine.events import (
    ApiErrorShown,
    Informational,
    Interrupted,
    RunFinished,
    StopHookSummary,
    ToolResultReady,
    TurnDuration,
)
from wisp.engine.hook_points import fire
from wisp.engine.model_call import Completed, ModelCaller, close_abandoned, flush_aborted
from wisp.engine.outcome import (
    Aborted,
    ApiFailed,
    HookStopped,
    LimitHit,
    Outcome,
    RunState,
    StructuredRetriesExhausted,
    Success,
    api_error_kind,
    api_error_text,
    run_stats,
)
from wisp.engine.plan_mode import PLAN_TOOL, in_plan_mode, plan_note, plan_path
from wisp.engine.refusal import Refusals
from wisp.engine.session import append_user
from wisp.engine.tool_calls import ToolRunState, run_one
from wisp.engine.usage import UsageLedger
from wisp.errors import ModelAPIError
from wisp.hooks.model import HookEvent, HookOutcome
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.models.base import ModelRequest
from wisp.models.shape import request_fields, user_id
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.engine.structured import StructuredRun

# The error type providers give a request the model's context cannot hold.
CONTEXT_FULL = "context_length_exceeded"

INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_TOOLS = "[Request interrupted by user for tool use]"
# What the model reads for a tool call an interrupt cut short: it may have run in part.
INTERRUPTED_TOOL_RESULT = ("The user interrupted this tool call while it was running, so it "
                           "may have run in part or not at all. Do not retry it; wait for the "
                           "user's next instruction.")
__all__ = ["AgentLoop", "build_request"]


def build_request(ctx: RunContext) -> ModelRequest:
    """The next request, shaped as the reference shapes it (`wisp.models.shape`)."""
    config, session = ctx.config, ctx.session
    tools = [t.api_definition() for t in config.tools.values()] + config.extra_tool_definitions
    system = config.system_blocks
    if PLAN_TOOL in config.tools and in_plan_mode(ctx):
        system = [*system, plan_note(ctx)]
    max_tokens = config.max_tokens or catalog.max_output_tokens(session.model)
    fields, betas = request_fields(session.model, max_tokens, config.thinking, config.betas)
    shaped = bool(fields)  # a Claude model: the reference's shape, metadata included
    if shaped and not config.device_id:
        from wisp.models.identity import device_id

        config.device_id = device_id(config.env)
    thinking = fields.pop("thinking", None)
    return ModelRequest(
        model=session.model,
        messages=with_context(session.history, config.context_blocks),
        max_tokens=max_tokens,
        system=system,
        tools=tools,
        thinking=thinking,
        metadata={"user_id": user_id(config.device_id, session.session_id)} if shaped else None,
        session_id=session.session_id,
        extra=fields,
        betas=betas if shaped else (),
    )


def with_context(history: list[JSON], blocks: list[JSON]) -> list[JSON]:
    """The history with `blocks` put at the start of its first user message (a copy)."""
    messages = list(history)
    if not blocks:
        return messages
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            messages[index] = {**message, "content": [*blocks, *(content or [])]}
            break
    return messages


class AgentLoop:
    def __init__(self, ctx: RunContext, tool_state: ToolRunState) -> None:
        self.ctx = ctx
        self.tools = tool_state
        self.state = RunState()
        self.caller = ModelCaller(ctx)
        self.pending_results: list[JSON] = []
        self.stop_hook_active = False
        self.structured: StructuredRun | None = None
        self.raw_tool_inputs: dict[str, str] = {}
        self.finished: RunFinished | None = None
        self.origin: JSON | None = None
        self.refusals = Refusals()

    async def run(self, prompt: str | list[JSON], uuid: str | None = None, *,
                  origin: JSON | None = None) -> Outcome:
        """Runs one prompt to its end, emits `RunFinished` and returns how it ended.
        `uuid` names the prompt's message (its transcript line, its checkpoint). `origin`
        says what prompted a run no user did (a task's notification: no UserPromptSubmit
        hooks, and its result carries it)."""
        self.origin = origin
        self.refusals = Refusals(uuid)
        self.tools.denials = self.state.denials
        self.ctx.run_usage = UsageLedger()
        self.ctx.session.abort.clear()
        if PLAN_TOOL in self.ctx.config.tools:  # plan mode's one writable file
            self.ctx.session.policy.plan_file = str(plan_path(self.ctx))
        self.ctx.hook_stop = None
        self.structured = _structured(self.ctx)
        started = time.monotonic()
        try:
            outcome = await self._submit(prompt, uuid)
            if outcome is None:
                outcome = await self._drive()
        except asyncio.CancelledError:
            outcome = self._abort()
        if self.ctx.parent_tool_use_id is None:
            self._turn_duration(started)
        stats = run_stats(self.state, self.ctx.run_usage, self.ctx.session.usage)
        self.finished = RunFinished(outcome, stats, origin=origin)
        self.ctx.emit(self.finished)
        return outcome

    def _turn_duration(self, started: float) -> None:
        tasks = self.ctx.tasks
        pending = sum(1 for t in tasks.tasks.values() if t.backgrounded and t.running
                      and t.task_type == "local_agent") if tasks is not None else 0
        self.ctx.emit(TurnDuration(round((time.monotonic() - started) * 1000),
                                   len(self.ctx.session.history), pending))

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

    async def _drive(self) -> Outcome:
        ctx, state = self.ctx, self.state
        while True:
            limit = self._limit(state.num_turns + 1)
            if limit is not None:
                state.num_turns += 1  # the reference counts the turn it refused
                return limit
            state.num_turns += 1
            self._deliver_notices()
            self._deliver_background_hooks()
            if await maybe_compact(ctx, ctx.session.last_usage):
                ctx.session.last_usage = None
            state.phase = "streaming"
            started = time.monotonic()
            try:
                completed = await self._call_compacting_once()
            except ModelAPIError as error:
                self._emit_api_error(error)
                return ApiFailed(error)
            finally:
                state.api_ms += (time.monotonic() - started) * 1000
            message = completed.message
            ctx.session.last_usage = message.get("usage") or {}
            state.stop_reason = message.get("stop_reason")
            if state.stop_reason == "refusal" and self.refusals.fell_back(ctx, completed):
                continue  # retracted: the fallback model answers the same request
            ctx.session.add_assistant(message, request_id=completed.request_id,
                                      block_uuids=completed.block_uuids)
            self.raw_tool_inputs = completed.raw_tool_inputs
            if state.stop_reason == "refusal":
                refused = self.refusals.refused(ctx, completed)
                if refused is not None:
                    return refused
                continue
            # The budget is checked after every call: one that overshoots ends the run
            # here, its tools unrun (docs/protocol.md, "Limits").
            outcome = self._limit(0) or await self._after_message(message)
            if outcome is not None:
                return outcome

    async def _call_compacting_once(self) -> Completed:
        """A server that says the context is full (error_type `context_length_exceeded`,
        which OpenAI-compatible providers report in all their spellings) gets one retry
        after the history is compacted."""
        ctx = self.ctx
        try:
            return await self.caller.call(build_request(ctx))
        except ModelAPIError as error:
            if error.error_type != CONTEXT_FULL:
                raise
            window = catalog.context_window(ctx.session.model)
            if not await compact(ctx, "auto", None, window):
                raise
        return await self.caller.call(build_request(ctx))

    async def _after_message(self, message: JSON) -> Outcome | None:
        state = self.state
        match decide(message, state.max_tokens_recoveries):
            case Finish():
                nudge = self.structured.nudge() if self.structured else None
                if nudge is not None:  # answered in prose: remind it once to call the tool
                    self.ctx.session.add_user(nudge)
                    return None
                return await self._stop_hooks(message)
            case RecoverMaxTokens(attempt=attempt):
                state.max_tokens_recoveries = attempt
                self.ctx.session.add_user(RECOVERY_PROMPT)
                return None
            case RunTools(tool_uses=tool_uses):
                await self._run_tools(tool_uses)
                outcome = self._structured_outcome()
                if outcome is None and self.ctx.hook_stop is not None:
                    # A hook's `continue: false`: this message's tools have run; the
                    # reference counts the turn it refused, and reports success.
                    state.num_turns += 1
                    return HookStopped(final_text(message), reason=self.ctx.hook_stop)
                return outcome
        return None

    def _structured_outcome(self) -> Outcome | None:
        """A valid StructuredOutput call ends the run with no further model call."""
        structured = self.structured
        if structured is None:
            return None
        if structured.accepted:
            self.state.num_turns += 1  # the reference counts the turn the call ended
            return Success(structured.result_text(), structured.value)
        if structured.exhausted:
            return StructuredRetriesExhausted(structured.failures)
        return None

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

    async def _run_tools(self, tool_uses: list[JSON]) -> None:
        self.state.phase = "tools"
        self.pending_results = results = []
        for block in tool_uses:
            raw = self.raw_tool_inputs.get(str(block.get("id")))
            if self.structured is not None and self.structured.handles(block):
                result_block, shown = self.structured.check(block, raw)
            else:
                result_block, shown = await run_one(self.ctx, self.tools, block, raw)
            results.append(result_block)
            self.ctx.emit(shown)
            # On disk as soon as it exists: a crash in the next tool must not lose it.
            self.ctx.session.record_user([result_block], uuid=shown.uuid)
            if self.ctx.session.abort.is_set():
                # Interrupted from inside this task (a host's deny with `interrupt`), which
                # can't cancel itself cleanly: end the run here, through the abort path.
                raise asyncio.CancelledError
        self.pending_results = []
        self.ctx.session.history.append({"role": "user", "content": results})

    def _limit(self, next_turn: int) -> LimitHit | None:
        config = self.ctx.config
        limit = check_limits(next_turn=next_turn, max_turns=config.max_turns,
                             cost_usd=self.ctx.session.usage.cost_usd,
                             max_budget_usd=config.max_budget_usd)
        return None if limit is None else LimitHit(limit)

    def _emit_api_error(self, error: ModelAPIError) -> None:
        self.ctx.emit(ApiErrorShown(api_error_text(error), error.status, api_error_kind(error)))

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


def _structured(ctx: RunContext) -> StructuredRun | None:
    """Only a run with a JSON schema loads structured output's module."""
    if not isinstance(ctx.config.json_schema, dict):
        return None
    from wisp.engine.structured import StructuredRun

    return StructuredRun.for_config(ctx.config)
