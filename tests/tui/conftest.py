from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.harness import TuiSetup, tui_setup


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[TuiSetup]:
    with tui_setup(tmp_path) as setup:
        yield setup
