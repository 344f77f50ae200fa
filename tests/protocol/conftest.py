"""The real-process tests here drive wisp with the duplex harness."""

from tests.duplex.conftest import duplex

__all__ = ["duplex"]
