"""Deployments and deployment runs through the official `anthropic` SDK, on the
embedded (SQLite) service: the scenarios of `deployment_scenarios`."""

from __future__ import annotations

from pathlib import Path

from tests.serve.deployment_scenarios import deployments_api, scheduled_run
from tests.serve.harness import serving
from wisp.testing import ScriptedServer

FAST = {"WISP_SERVE_SCHEDULE_POLL_S": "0.5"}


def test_deployments_are_made_run_paused_and_archived(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        deployments_api(server, served.client())


def test_the_service_fires_a_scheduled_run_once(tmp_path: Path,
                                                server: ScriptedServer) -> None:
    with serving(tmp_path, server, env=FAST) as served:
        scheduled_run(server, served.client())
