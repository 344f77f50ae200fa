"""The agent loop: call the model, run the tools it asks for, repeat until a stop rule.

Above: the runtime hands in one prompt and gets its typed `Outcome` back; every event,
ending with `RunFinished`, goes to `ctx.sink` as it happens. Below: the model
caller (streaming, retries), the tool runner (permissions, tools) and `decide`. Beside
it: the next request's shape (`next_request.py`), and the loop's base classes for its
hooks and notices (`loop_hooks.py`) and for ending an interrupted run (`loop_abort.py`).
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
from wisp.engine.events import ApiErrorShown, RunFinished, TurnDuration
from wisp.engine.loop_abort import (
    INTERRUPTED,
    INTERRUPTED_TOOL_RESULT,
    INTERRUPTED_TOOLS,
    LoopAbort,
)
from wisp.engine.loop_hooks import LoopHooks
from wisp.engine.model_call import Completed, ModelCaller
from wisp.engine.next_request import build_request
from wisp.engine.outcome import (
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
from wisp.engine.plan_mode import PLAN_TOOL, plan_path
from wisp.engine.refusal import Refusals
from wisp.engine.tool_calls import ToolRunState, run_one
from wisp.engine.usage import UsageLedger
from wisp.errors import ModelAPIError
from wisp.jsontypes import JSON
from wisp.models import catalog

if TYPE_CHECKING:
    from wisp.engine.structured import StructuredRun

# The error type providers give a request the model's context cannot hold.
CONTEXT_FULL = "context_length_exceeded"

__all__ = ["INTERRUPTED", "INTERRUPTED_TOOLS", "INTERRUPTED_TOOL_RESULT", "AgentLoop",
           "build_request"]


class AgentLoop(LoopHooks, LoopAbort):
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


def _structured(ctx: RunContext) -> StructuredRun | None:
    """Only a run with a JSON schema loads structured output's module."""
    if not isinstance(ctx.config.json_schema, dict):
        return None
    from wisp.engine.structured import StructuredRun

    return StructuredRun.for_config(ctx.config)
