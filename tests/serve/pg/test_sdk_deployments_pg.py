"""Deployments through the official SDK on the PostgreSQL/DBOS deployment: the same
scenarios as tests/serve/test_sdk_deployments.py, the scheduled one with two API
replicas (each runs a scheduler) so that an occurrence is seen to fire once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.deployment_scenarios import deployments_api, scheduled_run
from tests.serve.harness import Served, split_serving
from wisp.testing import ScriptedServer

pytest.importorskip("dbos", reason="DBOS Transact is not installed (pip install dbos)")
FAST = {"WISP_SERVE_SCHEDULE_POLL_S": "0.5"}


def test_deployments_on_postgres(tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        deployments_api(server, served.client())


def test_two_api_replicas_fire_a_scheduled_run_once(tmp_path: Path, server: ScriptedServer,
                                                    dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn, env=FAST) as served:
        replica = Served(tmp_path, server, "--role", "api", env=FAST, store=dsn).start()
        try:
            scheduled_run(server, served.client())
        finally:
            replica.stop()
