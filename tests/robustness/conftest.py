"""The duplex fixture (a real wisp duplex process, killed at teardown) for these tests."""

from __future__ import annotations

from tests.duplex.conftest import duplex

__all__ = ["duplex"]
