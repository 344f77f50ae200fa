"""The memory scenarios of tests/serve/test_sdk_memory.py on PostgreSQL, with the API
and the worker in separate processes."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import split_serving
from tests.serve.memory_scenarios import memory_api, session_writes_memory
from wisp.testing import ScriptedServer


def test_the_memory_api_on_postgres(tmp_path: Path, server: ScriptedServer,
                                    dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        memory_api(served.client())


def test_a_session_writes_memory_on_postgres(tmp_path: Path, server: ScriptedServer,
                                             dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        session_writes_memory(server, served.client())
