"""Memory stores through the official `anthropic` SDK against the real `wisp serve` on
its embedded store: stores, memories, versions and redaction as the SDK models them, and
a session's agent writing to an attached store with the memory tool (the scenarios are in
tests/serve/memory_scenarios.py, shared with the PostgreSQL run)."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import serving
from tests.serve.memory_scenarios import memory_api, session_writes_memory
from wisp.testing import ScriptedServer


def test_the_memory_api_through_the_sdk(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        memory_api(served.client())
        # Another key sees none of it.
        assert list(served.client("key-beta").beta.memory_stores.list()) == []


def test_a_session_writes_its_memory_store_through_the_memory_tool(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        session_writes_memory(server, served.client())
