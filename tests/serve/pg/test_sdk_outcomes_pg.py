"""The outcome scenarios of tests/serve/test_sdk_outcomes.py on PostgreSQL, with the API
and the worker (DBOS turns) in separate processes."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import split_serving
from tests.serve.outcome_scenarios import max_iterations_reached, revised_then_satisfied
from wisp.testing import ScriptedServer


def test_an_outcome_revised_then_satisfied_on_postgres(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        revised_then_satisfied(server, served.client())


def test_an_outcome_reaching_max_iterations_on_postgres(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        max_iterations_reached(server, served.client())
