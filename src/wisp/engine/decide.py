"""The stop/continue rules of the agent loop (seed 003's decision table) as pure functions.

`decide` looks at one complete assistant message; `check_limits` runs before each model
call. The loop matches on what they return and does the I/O.
"""

from __future__ import annotations

from wisp.jsontypes import JSON
from wisp.values import Value

MAX_TOKENS_RECOVERIES = 3


# Frozen records: `Value`s, which unlike frozen dataclasses cost nothing to define.


class RunTools(Value):
    tool_uses: list[JSON]


class RecoverMaxTokens(Value):
    attempt: int


class Finish(Value):
    stop_reason: str | None


Decision = RunTools | RecoverMaxTokens | Finish


def decide(message: JSON, max_tokens_recoveries: int) -> Decision:
    content = message.get("content") or []
    tool_uses = [b for b in content if b.get("type") == "tool_use"]
    stop_reason = message.get("stop_reason")
    if tool_uses:
        return RunTools(tool_uses)
    if stop_reason == "max_tokens" and max_tokens_recoveries < MAX_TOKENS_RECOVERIES:
        return RecoverMaxTokens(max_tokens_recoveries + 1)
    return Finish(stop_reason)


class MaxTurnsReached(Value):
    max_turns: int


class BudgetExhausted(Value):
    max_budget_usd: float


Limit = MaxTurnsReached | BudgetExhausted


def check_limits(
    *, next_turn: int, max_turns: int | None, cost_usd: float, max_budget_usd: float | None
) -> Limit | None:
    """Called before model call number `next_turn` (1-based) and after each call."""
    if max_budget_usd is not None and cost_usd >= max_budget_usd:
        return BudgetExhausted(max_budget_usd)
    if max_turns is not None and next_turn > max_turns:
        return MaxTurnsReached(max_turns)
    return None


def final_text(message: JSON) -> str:
    """The text a `result` reports: the text blocks of the last assistant message."""
    parts = [b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"]
    return "".join(parts)


RECOVERY_PROMPT = (
    "Your previous response was cut off by the output token limit. Continue exactly where "
    "you stopped, without repeating anything; if the remaining work is large, split it "
    "into smaller steps."
)
