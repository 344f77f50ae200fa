"""How a run ended (a closed union of outcomes), and the figures it reports."""

from __future__ import annotations

import time
from typing import Any

from wisp.engine.decide import BudgetExhausted, Limit, MaxTurnsReached
from wisp.engine.events import RunStats
from wisp.engine.usage import UsageLedger
from wisp.errors import MissingCredentials, ModelAPIError, Unreachable
from wisp.jsontypes import JSON
from wisp.values import Record, Value, field


class RunState(Record):
    started: float = field(default_factory=time.monotonic)
    num_turns: int = 0
    api_ms: float = 0.0
    stop_reason: str | None = None
    phase: str = "idle"  # "streaming" | "tools": what an interrupt cut short
    max_tokens_recoveries: int = 0
    denials: list[JSON] = field(default_factory=list)


# Frozen records: `Value`s, which unlike frozen dataclasses cost nothing to define.


class Success(Value):
    text: str
    structured_output: Any = None


class ApiFailed(Value):
    error: ModelAPIError


class LimitHit(Value):
    limit: Limit


class Aborted(Value):
    phase: str


class StructuredRetriesExhausted(Value):
    attempts: int


class HookStopped(Success):
    """A hook had the last word, which is no error (the reference reports success): a
    `continue: false` after the step it answered ("hook_stopped"), a Stop hook's
    ("stop_hook_prevented"), or a UserPromptSubmit hook that blocked or stopped the prompt
    before any model call (no terminal reason, as in the reference). `text` is the result."""

    reason: str = ""
    terminal_reason: str | None = "hook_stopped"


class Failed(Value):
    """The turn could not run at all (e.g. a required MCP tool is missing)."""

    message: str


Outcome = (Success | ApiFailed | LimitHit | Aborted | StructuredRetriesExhausted | HookStopped
           | Failed)


def api_error_text(error: ModelAPIError) -> str:
    if isinstance(error, MissingCredentials):
        return error.message  # nothing was asked: no API said anything (the reference's form)
    if isinstance(error, Unreachable) and error.hint:
        return f"API Error: {error.hint}"
    if error.status is None:
        return f"API Error: {error.message}"
    return f"API Error: {error.status} {error.message}"


def api_error_kind(error: ModelAPIError) -> str:
    """The assistant frame's `error`, which the SDKs type (`AssistantMessage.error`)."""
    return "authentication_failed" if isinstance(error, MissingCredentials) else "unknown"


def ending(outcome: Outcome) -> tuple[str, str | None, list[str]]:  # noqa: PLR0911
    """(subtype, terminal_reason, errors) for each kind of ending (one arm each): the words
    every front end reports, whatever its format. No terminal reason: the result has none."""
    match outcome:
        case HookStopped(terminal_reason=reason):
            return "success", reason, []
        case Success():
            return "success", "completed", []
        case ApiFailed():
            # The reference reports API failures as subtype "success" with is_error; clients
            # key on is_error / terminal_reason, so we keep that shape.
            return "success", "api_error", []
        case LimitHit(limit=MaxTurnsReached(max_turns=n)):
            return "error_max_turns", "max_turns", [f"Reached maximum number of turns ({n})"]
        case LimitHit(limit=BudgetExhausted(max_budget_usd=usd)):
            return "error_max_budget_usd", "budget_exhausted", [f"Reached maximum budget (${usd})"]
        case Aborted(phase=phase):
            reason = "aborted_tools" if phase == "tools" else "aborted_streaming"
            return "error_during_execution", reason, ["Interrupted by user"]
        case Failed(message=message):
            return "error_during_execution", "error", [message]
        case StructuredRetriesExhausted(attempts=n):
            return ("error_max_structured_output_retries", "structured_output_retries",
                    [f"Failed to provide valid structured output after {n} attempts"])
    raise AssertionError(outcome)


def run_stats(state: RunState, run_usage: UsageLedger, session_usage: UsageLedger) -> RunStats:
    return RunStats(duration_ms=round((time.monotonic() - state.started) * 1000),
                    api_ms=round(state.api_ms), num_turns=state.num_turns,
                    stop_reason=state.stop_reason, denials=state.denials,
                    run_usage=run_usage, session_usage=session_usage)
