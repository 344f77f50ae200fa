"""`decide` and `check_limits`: the loop's stop/continue table, as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from wisp.engine.decide import (
    MAX_TOKENS_RECOVERIES,
    BudgetExhausted,
    Finish,
    MaxTurnsReached,
    RecoverMaxTokens,
    RunTools,
    check_limits,
    decide,
    final_text,
)

JSON = dict[str, Any]
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Echo", "input": {}}


def message(*blocks: JSON, stop_reason: str | None = "end_turn") -> JSON:
    return {"role": "assistant", "content": list(blocks), "stop_reason": stop_reason}


def test_text_ends_the_run_with_its_stop_reason() -> None:
    assert decide(message({"type": "text", "text": "hi"}), 0) == Finish("end_turn")
    assert decide(message(stop_reason="stop_sequence"), 0) == Finish("stop_sequence")


def test_an_empty_or_missing_content_finishes() -> None:
    assert decide({"stop_reason": None}, 0) == Finish(None)
    assert decide({"content": None, "stop_reason": "end_turn"}, 0) == Finish("end_turn")


@pytest.mark.parametrize("stop_reason", ["tool_use", "end_turn", "max_tokens", None])
def test_tool_uses_run_whatever_the_stop_reason(stop_reason: str | None) -> None:
    # A stream cut after a complete tool_use, or a max_tokens stop after one, still runs it.
    second = {**TOOL, "id": "toolu_2"}
    decision = decide(message({"type": "text", "text": "x"}, TOOL, second,
                              stop_reason=stop_reason), MAX_TOKENS_RECOVERIES)
    assert decision == RunTools([TOOL, second])


def test_max_tokens_recovers_three_times_then_finishes() -> None:
    cut = message({"type": "text", "text": "partial"}, stop_reason="max_tokens")
    assert [decide(cut, n) for n in range(MAX_TOKENS_RECOVERIES)] == [
        RecoverMaxTokens(1), RecoverMaxTokens(2), RecoverMaxTokens(3)]
    assert MAX_TOKENS_RECOVERIES == 3
    assert decide(cut, 3) == Finish("max_tokens")
    assert decide(cut, 7) == Finish("max_tokens")


def test_limits_budget_before_turns() -> None:
    assert check_limits(next_turn=1, max_turns=None, cost_usd=0, max_budget_usd=None) is None
    assert check_limits(next_turn=3, max_turns=3, cost_usd=0, max_budget_usd=None) is None
    assert check_limits(next_turn=4, max_turns=3, cost_usd=0,
                        max_budget_usd=None) == MaxTurnsReached(3)
    # Both hit: the budget is reported.
    assert check_limits(next_turn=4, max_turns=3, cost_usd=1.0,
                        max_budget_usd=1.0) == BudgetExhausted(1.0)
    assert check_limits(next_turn=1, max_turns=None, cost_usd=0.99,
                        max_budget_usd=1.0) is None
    # next_turn=0 is the check between a message and its tools: only the budget counts.
    assert check_limits(next_turn=0, max_turns=0, cost_usd=0, max_budget_usd=None) is None


def test_max_turns_zero_refuses_the_first_call() -> None:
    assert check_limits(next_turn=1, max_turns=0, cost_usd=0,
                        max_budget_usd=None) == MaxTurnsReached(0)


def test_final_text_joins_text_blocks_only() -> None:
    msg = message({"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a"}, TOOL,
                  {"type": "text", "text": "b"})
    assert final_text(msg) == "ab"
    assert final_text({}) == ""
