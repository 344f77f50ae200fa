"""Skills through the official SDK on the PostgreSQL/DBOS deployment (API and worker
processes apart): the same scenarios as tests/serve/test_sdk_skills.py."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import KEYS, split_serving
from tests.serve.skill_scenarios import session_uses_skill, skills_api
from wisp.testing import ScriptedServer


def test_the_skills_api_on_postgres(tmp_path: Path, server: ScriptedServer,
                                    dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        skills_api(served.client(), served.client(KEYS[1]))


def test_a_session_uses_a_skill_on_postgres(tmp_path: Path, server: ScriptedServer,
                                            dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn) as served:
        session_uses_skill(server, served.client(), tmp_path / "serve" / "workspaces")
