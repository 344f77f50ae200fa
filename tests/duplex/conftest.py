"""`duplex(*args)` starts a real wisp duplex process; teardown kills any left running."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import Runner
from tests.duplex.harness import Duplex


@pytest.fixture
def duplex(wisp: Runner) -> Iterator[Callable[..., Duplex]]:
    started: list[Duplex] = []

    def start(*args: str, **kwargs: Any) -> Duplex:
        proc = Duplex(wisp, *args, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
