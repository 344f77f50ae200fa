"""Multi-agent sessions through the official `anthropic` SDK against the real `wisp
serve` on its embedded store, with the scripted model: a coordinator delegates to its
roster agent, which runs as a session thread (tests/serve/thread_scenarios.py)."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import serving
from tests.serve.thread_scenarios import coordinator_delegates
from wisp.testing import ScriptedServer


def test_a_coordinator_delegates_to_a_thread(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        coordinator_delegates(server, served.client())
