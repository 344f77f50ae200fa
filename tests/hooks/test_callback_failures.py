"""SDK callback hooks that fail: reported and skipped, unless their matcher blocks on
failure, and then the failure blocks, whatever way the callback failed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wisp.errors import ChannelClosed, RequestFailed
from wisp.hooks.model import CallbackHook, HookMatcher
from wisp.hooks.runner import HookRunner

FAILURES = [RuntimeError("the callback raised"), RequestFailed("the host answered an error"),
            ChannelClosed("the host closed stdin"), TimeoutError()]


def outcome_for(failure: BaseException, blocks: bool) -> Any:
    async def callback(callback_id: str, data: Any, tool_use_id: Any, timeout: Any) -> Any:
        raise failure

    matcher = HookMatcher("PreToolUse", None, (CallbackHook("hook_0", None, blocks),))
    runner = HookRunner([matcher], callback=callback)
    return asyncio.run(runner.run("PreToolUse", {"tool_name": "Bash"}, target="Bash"))


@pytest.mark.parametrize("failure", FAILURES, ids=lambda f: type(f).__name__)
def test_a_guard_that_blocks_on_failure_denies_however_it_failed(failure: BaseException) -> None:
    outcome = outcome_for(failure, blocks=True)
    assert outcome.blocked and outcome.permission_decision == "deny"


@pytest.mark.parametrize("failure", FAILURES, ids=lambda f: type(f).__name__)
def test_other_failed_callbacks_are_skipped(failure: BaseException,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    outcome = outcome_for(failure, blocks=False)
    assert not outcome.blocked and outcome.permission_decision is None
    said = capfd.readouterr().err
    # A host that has gone away is no failure worth a warning; the rest are reported.
    assert ("failed" in said) == (not isinstance(failure, ChannelClosed))
