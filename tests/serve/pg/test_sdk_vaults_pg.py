"""The vault scenarios of tests/serve/test_sdk_vaults.py on PostgreSQL, with the API and
the worker in separate processes (the worker opens the sealed token and connects the
MCP server)."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import split_serving
from tests.serve.vault_scenarios import (
    ENV,
    session_calls_mcp,
    sessions_check_vaults,
    vault_api,
)
from wisp.testing import ScriptedServer


def test_the_vault_api_on_postgres(tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn, env=ENV) as served:
        vault_api(served.client())
        sessions_check_vaults(served.client())


def test_an_agent_calls_its_mcp_server_on_postgres(tmp_path: Path, server: ScriptedServer,
                                                   dsn: str) -> None:
    with split_serving(tmp_path, server, dsn=dsn, env=ENV) as served:
        session_calls_mcp(server, served.client())
