"""The coordinator scenario of tests/serve/test_sdk_threads.py on PostgreSQL, with the
API and the worker (DBOS turns) in separate processes."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import split_serving
from tests.serve.thread_scenarios import coordinator_delegates
from wisp.testing import ScriptedServer


def test_a_coordinator_delegates_on_postgres(tmp_path: Path, server: ScriptedServer,
                                             dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        coordinator_delegates(server, served.client())
