"""Vaults and agent MCP servers through the official `anthropic` SDK against the real
`wisp serve` on its embedded store (the scenarios are in tests/serve/vault_scenarios.py,
shared with the PostgreSQL run), and what only this store lets a test see: the secret
is not in the database file in plain text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.serve.harness import anthropic, idle_end_turn, serving, user_message, wait_for
from tests.serve.vault_scenarios import (
    ENV,
    TOKEN,
    guarded_mcp_server,
    mcp_agent,
    session_calls_mcp,
    sessions_check_vaults,
    vault_api,
)
from wisp.serve import sealing
from wisp.serve.session_mcp import egress_refusal
from wisp.testing import ScriptedServer, reply


def test_the_vault_api_through_the_sdk(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server, env=ENV) as served:
        client = served.client()
        vault_api(client)
        sessions_check_vaults(client)
        # Another key sees none of it.
        assert list(served.client("key-beta").beta.vaults.list()) == []
        [vault, *_] = list(client.beta.vaults.list())
        with pytest.raises(anthropic.NotFoundError):
            served.client("key-beta").beta.vaults.retrieve(vault.id)
        database = b"".join(p.read_bytes() for p in served.store.parent.glob("wisp.db*"))
        assert b"static_bearer" in database  # the credential is there…
        assert TOKEN.encode() not in database  # …its token is not, in any form
        assert b"new-token" not in database


def test_without_a_key_no_credential_is_stored(tmp_path: Path,
                                                server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        vault = client.beta.vaults.create(display_name="v")
        with pytest.raises(anthropic.BadRequestError, match="WISP_SERVE_VAULT_KEY"):
            client.beta.vaults.credentials.create(vault.id, auth={
                "type": "static_bearer", "mcp_server_url": "https://a.example/mcp",
                "token": TOKEN})
        assert list(client.beta.vaults.credentials.list(vault.id)) == []


def test_an_agent_calls_its_mcp_server_with_the_vaults_token(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server, env=ENV) as served:
        session_calls_mcp(server, served.client())


def test_sealed_secrets_open_only_with_their_key_and_credential() -> None:
    key = {sealing.KEY_ENV: "ab" * 32}
    sealed = sealing.seal({"token": "t"}, "vcrd_1", key)
    assert "t\"" not in sealed and sealing.unseal(sealed, "vcrd_1", key) == {"token": "t"}
    with pytest.raises(sealing.SealingError):
        sealing.unseal(sealed, "vcrd_2", key)  # copied onto another credential
    with pytest.raises(sealing.SealingError, match="does not open"):
        sealing.unseal(sealed, "vcrd_1", {sealing.KEY_ENV: "cd" * 32})
    for bad in ({}, {sealing.KEY_ENV: "short"}):
        with pytest.raises(sealing.SealingError, match=sealing.KEY_ENV):
            sealing.seal({"token": "t"}, "vcrd_1", bad)


def test_where_the_service_may_connect_to_mcp_servers() -> None:
    limited = {"config": {"type": "cloud", "networking": {
        "type": "limited", "allowed_hosts": ["mcp.example.com"], "allow_mcp_servers": False}}}
    allowed = {**ENV}

    async def refusal(url: str, environment: object, env: dict[str, str]) -> str | None:
        return await egress_refusal(url, environment, env)  # type: ignore[arg-type]

    assert "allowed_hosts" in (asyncio.run(refusal("https://other.example/mcp", limited,
                                                   allowed)) or "")
    assert asyncio.run(refusal("https://mcp.example.com/mcp", limited, allowed)) is None
    opened = {"config": {**limited["config"], "networking": {
        "type": "limited", "allow_mcp_servers": True}}}
    assert asyncio.run(refusal("https://other.example/mcp", opened, allowed)) is None
    private = asyncio.run(refusal("http://127.0.0.1:9/mcp", None, {}))
    assert private is not None and "WISP_SERVE_MCP_ALLOW_PRIVATE" in private


def test_an_mcp_tool_asks_the_client_first_by_default(tmp_path: Path,
                                                      server: ScriptedServer) -> None:
    """An mcp_toolset's default policy is always_ask: the call waits for the client's
    `user.tool_confirmation` and reaches the server only once allowed."""
    with guarded_mcp_server() as mcp, serving(tmp_path, server, env=ENV) as served:
        client = served.client()
        url = mcp.url("/mcp")
        vault = client.beta.vaults.create(display_name="mcp")
        client.beta.vaults.credentials.create(
            vault.id, auth={"type": "static_bearer", "mcp_server_url": url, "token": TOKEN})
        agent = client.beta.agents.create(
            name="asker", model="claude-sonnet-4-5",
            mcp_servers=[{"type": "url", "name": "calc", "url": url}],
            tools=[{"type": "mcp_toolset", "mcp_server_name": "calc"}])
        environment = client.beta.environments.create(name="e", config={"type": "cloud"})
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              vault_ids=[vault.id])
        server.script(reply.tool_use("mcp__calc__add", {"a": 4, "b": 5}), reply.text("nine"))
        client.beta.sessions.events.send(session.id, events=[user_message("add")])
        events = wait_for(client, session.id, lambda es: any(
            e["type"] == "session.status_idle"
            and e["stop_reason"]["type"] == "requires_action" for e in es))
        [use] = [e for e in events if e["type"] == "agent.mcp_tool_use"]
        assert use["evaluated_permission"] == "ask"
        assert "tools/call" not in mcp.rpc_methods()
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.tool_confirmation", "tool_use_id": use["id"], "result": "allow"}])
        events = wait_for(client, session.id, idle_end_turn)
        [result] = [e for e in events if e["type"] == "agent.mcp_tool_result"]
        assert result["is_error"] is False and "9" in str(result["content"])
        assert mcp.rpc_methods().count("tools/call") == 1


def test_a_session_thread_calls_mcp_with_its_sessions_vault(tmp_path: Path,
                                                            server: ScriptedServer) -> None:
    """An agent of a coordinator's roster connects its MCP server with the token of the
    session's vault; its calls are in its thread's own log."""
    with guarded_mcp_server() as mcp, serving(tmp_path, server, env=ENV) as served:
        client = served.client()
        url = mcp.url("/mcp")
        vault = client.beta.vaults.create(display_name="mcp")
        client.beta.vaults.credentials.create(
            vault.id, auth={"type": "static_bearer", "mcp_server_url": url, "token": TOKEN})
        helper, environment = mcp_agent(client, url)
        lead = client.beta.agents.create(name="lead", model="claude-sonnet-4-5", multiagent={
            "type": "coordinator", "agents": [helper.id]})
        session = client.beta.sessions.create(agent=lead.id, environment_id=environment.id,
                                              vault_ids=[vault.id])
        server.script(
            reply.tool_use("delegate_to_agent", {"agent": "caller", "message": "add"}),
            reply.tool_use("mcp__calc__add", {"a": 20, "b": 22}), reply.text("42"),
            reply.text("done"))
        client.beta.sessions.events.send(session.id, events=[user_message("go")])
        events = wait_for(client, session.id, idle_end_turn)
        assert not any(e["type"] == "session.error" for e in events), events
        [thread] = list(client.beta.sessions.threads.list(session.id))
        own = [e.model_dump() for e in client.beta.sessions.threads.events.list(
            thread.id, session_id=session.id)]
        [result] = [e for e in own if e["type"] == "agent.mcp_tool_result"]
        assert result["is_error"] is False and "42" in str(result["content"])
