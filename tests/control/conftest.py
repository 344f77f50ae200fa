"""In-process control-channel tests: two Dispatchers joined by `wisp.testing.ControlChannel`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
JSON = dict[str, Any]


def run_async(coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.001)


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Outbound request ids become "id-0", "id-1", ... (the dispatcher draws them from
    uuid4), so a test can answer a request before it is made. Returns the ids drawn."""
    import uuid

    drawn: list[str] = []

    def next_id() -> str:
        drawn.append(f"id-{len(drawn)}")
        return drawn[-1]

    monkeypatch.setattr(uuid, "uuid4", next_id)
    return drawn
