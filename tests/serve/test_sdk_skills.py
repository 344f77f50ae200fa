"""Skills and skill versions through the official `anthropic` SDK, on the embedded
(SQLite) service: the scenarios of `skill_scenarios`."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import KEYS, serving
from tests.serve.skill_scenarios import (
    self_hosted_worker_gets_skills,
    session_uses_skill,
    skills_api,
)
from wisp.testing import ScriptedServer


def test_skills_and_versions_are_created_listed_downloaded_and_deleted(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        skills_api(served.client(), served.client(KEYS[1]))


def test_an_agents_skill_is_offered_and_its_files_are_in_the_workspace(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        session_uses_skill(server, served.client(), tmp_path / "serve" / "workspaces")


def test_a_self_hosted_workers_tool_context_downloads_the_skills(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        workdir = tmp_path / "work"
        workdir.mkdir()
        self_hosted_worker_gets_skills(served.client(), served.async_client(), workdir)
