"""Waiting on a condition with a deadline, the suite's one way to wait for something.

A fixed sleep says "by now it has surely happened": on a loaded 2-core machine that can be
false (the test then checks too early, and may pass for the wrong reason), and on an idle
one it wastes the rest of the sleep. These poll the condition itself, return as soon as it
holds, and fail with what was waited for once the deadline passes.
(tests/test_suite_honesty.py keeps new fixed sleeps out of the tests.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Generous: the deadline is only reached when something is wrong, and a loaded machine
# must not be mistaken for that.
DEFAULT_TIMEOUT_S = 30.0


def wait_until(predicate: Callable[[], T], what: str, timeout: float = DEFAULT_TIMEOUT_S,
               interval: float = 0.02) -> T:
    """The first truthy value of `predicate()`, polled every `interval` seconds; an
    AssertionError naming `what` (and the last value seen) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last saw {value!r}")
        time.sleep(interval)


async def until(predicate: Callable[[], T], what: str, timeout: float = DEFAULT_TIMEOUT_S,
                interval: float = 0.01) -> T:
    """`wait_until` for a coroutine: polls without blocking the event loop."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last saw {value!r}")
        await asyncio.sleep(interval)
