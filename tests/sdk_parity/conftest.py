"""The `backend` fixture: each parity test runs once per backend (see harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sdk_parity.harness import BACKENDS, Backend, open_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    with open_backend(request.param, tmp_path / request.param) as b:
        yield b
