"""What the vault tests do through the official SDK, on whichever store the service runs
on (SQLite here, PostgreSQL in tests/serve/pg): the vault API's whole surface, and a
session whose agent calls a tool of an MCP server that wants a bearer token its vault
holds (a real streamable-HTTP server on 127.0.0.1, built on the `mcp` package)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.mcp import remote_servers
from tests.serve.harness import anthropic, user_message, wait_for
from tests.serve.memory_scenarios import strict
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
TOKEN = "tok-Secret-4242"
# What the services under test seal with (any 32 bytes; base64 as an operator writes it).
VAULT_KEY = base64.b64encode(bytes(range(32))).decode()
ENV = {"WISP_SERVE_VAULT_KEY": VAULT_KEY, "WISP_SERVE_MCP_ALLOW_PRIVATE": "1"}


def bearer_required(app: remote_servers.App, token: str) -> remote_servers.App:
    """`app`, answering 401 (with a Bearer challenge) to any request without the token."""
    async def guarded(scope: remote_servers.Scope, receive: remote_servers.Receive,
                      send: remote_servers.Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"www-authenticate", b'Bearer realm="test"')]})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    return guarded


@contextmanager
def guarded_mcp_server() -> Iterator[remote_servers.Served]:
    app = bearer_required(remote_servers.remote_app("http", json_response=True), TOKEN)
    with remote_servers.served(app) as server:
        yield server


def vault_api(client: Any) -> None:
    """Vaults made, changed, archived and deleted; credentials made, listed, changed,
    archived and deleted; no response ever carries a secret."""
    vaults = client.beta.vaults
    vault = vaults.create(display_name="team tokens", metadata={"team": "a"})
    strict(vault)
    assert (vault.type, vault.display_name, vault.archived_at) == ("vault", "team tokens",
                                                                   None)
    assert vault.id.startswith("vlt_")
    changed = vaults.update(vault.id, display_name="tokens", metadata={"team": None, "x": "1"})
    assert (changed.display_name, changed.metadata) == ("tokens", {"x": "1"})
    assert vaults.retrieve(vault.id).display_name == "tokens"
    with pytest.raises(anthropic.BadRequestError, match="display_name"):
        vaults.create(display_name="")
    credentials_kept(client, vault.id)

    other = vaults.create(display_name="spare")
    assert {v.id for v in vaults.list()} == {vault.id, other.id}
    archived = vaults.archive(other.id)
    assert archived.archived_at is not None
    assert [v.id for v in vaults.list()] == [vault.id]
    assert {v.id for v in vaults.list(include_archived=True)} == {vault.id, other.id}
    with pytest.raises(anthropic.BadRequestError, match="archived"):
        vaults.update(other.id, display_name="again")
    assert vaults.delete(other.id).type == "vault_deleted"
    with pytest.raises(anthropic.NotFoundError):
        vaults.retrieve(other.id)
    with pytest.raises(anthropic.BadRequestError, match="limit"):
        list(vaults.list(limit=0))


def credentials_kept(client: Any, vault_id: str) -> None:
    credentials = client.beta.vaults.credentials
    url = "https://mcp.example.com/mcp"
    made = credentials.create(vault_id, display_name="example",
                              auth={"type": "static_bearer", "mcp_server_url": url,
                                    "token": TOKEN})
    strict(made)
    assert made.id.startswith("vcrd_") and made.vault_id == vault_id
    assert (made.auth.type, made.auth.mcp_server_url) == ("static_bearer", url)
    raw = credentials.with_raw_response.retrieve(made.id, vault_id=vault_id)
    assert TOKEN not in raw.http_response.text and "token" not in raw.http_response.json()[
        "auth"]
    with pytest.raises(anthropic.ConflictError, match="already authenticates"):
        credentials.create(vault_id, auth={"type": "static_bearer", "mcp_server_url": url + "/",
                                           "token": "other"})
    refused_auths(credentials, vault_id)

    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    oauth = credentials.create(vault_id, auth={
        "type": "mcp_oauth", "mcp_server_url": "https://other.example.com/mcp",
        "access_token": "at-1", "expires_at": later})
    strict(oauth)
    assert oauth.auth.type == "mcp_oauth" and oauth.auth.expires_at is not None
    updated = credentials.update(made.id, vault_id=vault_id, display_name="renamed",
                                 auth={"type": "static_bearer", "token": "new-token"})
    assert updated.display_name == "renamed" and updated.updated_at >= made.updated_at
    with pytest.raises(anthropic.BadRequestError, match="type cannot change"):
        credentials.update(made.id, vault_id=vault_id,
                           auth={"type": "mcp_oauth", "access_token": "x"})
    assert {c.id for c in credentials.list(vault_id)} == {made.id, oauth.id}

    gone = credentials.archive(oauth.id, vault_id=vault_id)
    assert gone.archived_at is not None
    assert [c.id for c in credentials.list(vault_id)] == [made.id]
    assert len(list(credentials.list(vault_id, include_archived=True))) == 2
    with pytest.raises(anthropic.BadRequestError, match="archived"):
        credentials.update(oauth.id, vault_id=vault_id, display_name="back")
    assert credentials.delete(oauth.id, vault_id=vault_id).type == "vault_credential_deleted"
    with pytest.raises(anthropic.NotFoundError):
        credentials.retrieve(oauth.id, vault_id=vault_id)


def refused_auths(credentials: Any, vault_id: str) -> None:
    """Settings this server would keep and never act on, and malformed ones."""
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    for auth, field in (
        ({"type": "environment_variable", "secret_name": "K", "secret_value": "v",
          "networking": {"type": "unrestricted"}}, "auth.type"),
        ({"type": "mcp_oauth", "mcp_server_url": "https://a.example/mcp", "access_token": "t",
          "refresh": {"client_id": "c", "refresh_token": "r", "token_endpoint": "https://a",
                      "token_endpoint_auth": {"type": "none"}}}, "auth.refresh"),
        ({"type": "mcp_oauth", "mcp_server_url": "https://a.example/mcp", "access_token": "t",
          "expires_at": past}, "auth.expires_at"),
        ({"type": "static_bearer", "mcp_server_url": "ftp://a.example", "token": "t"},
         "auth.mcp_server_url"),
    ):
        with pytest.raises(anthropic.BadRequestError, match=field):
            credentials.create(vault_id, auth=auth)


def sessions_check_vaults(client: Any) -> None:
    """A session's `vault_ids` name live vaults of the caller's."""
    agent = client.beta.agents.create(name="a", model="claude-sonnet-4-5")
    environment = client.beta.environments.create(name="e", config={"type": "cloud"})
    kept = client.beta.vaults.create(display_name="kept")
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                          vault_ids=[kept.id])
    assert session.vault_ids == [kept.id]
    archived = client.beta.vaults.create(display_name="old")
    client.beta.vaults.archive(archived.id)
    for vault_id, why in ((archived.id, "archived"), ("vlt_nope", "not found")):
        with pytest.raises(anthropic.BadRequestError, match=why):
            client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                        vault_ids=[kept.id, vault_id])


def mcp_agent(client: Any, url: str) -> tuple[Any, Any]:
    agent = client.beta.agents.create(
        name="caller", model="claude-sonnet-4-5",
        mcp_servers=[{"type": "url", "name": "calc", "url": url}],
        tools=[{"type": "mcp_toolset", "mcp_server_name": "calc",
                "default_config": {"permission_policy": {"type": "always_allow"}},
                "configs": [{"name": "wait", "enabled": False}]}])
    environment = client.beta.environments.create(name="env", config={"type": "cloud"})
    return agent, environment


def turn(server: ScriptedServer, client: Any, session_id: str, *replies: Any) -> list[JSON]:
    """One user message answered by `replies`; the session's events once it is idle."""
    server.script(*replies)
    before = len(list(client.beta.sessions.events.list(session_id)))
    client.beta.sessions.events.send(session_id, events=[user_message("go")])
    return wait_for(client, session_id, lambda es: len(es) > before and any(
        e["type"] == "session.status_idle" and e["stop_reason"]["type"] == "end_turn"
        for e in es[before:]))[before:]


def last_tool_result(server: ScriptedServer) -> JSON:
    """The tool_result block the model was sent last."""
    for request in reversed(server.requests):
        for message in reversed((request.body or {}).get("messages") or []):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return block
    raise AssertionError("the model was never sent a tool result")


def session_calls_mcp(server: ScriptedServer, client: Any) -> None:
    """The agent's MCP tool, authenticated by the vault's token, answers the model; once
    the credential is archived the same call fails with a clear error."""
    with guarded_mcp_server() as mcp:
        url = mcp.url("/mcp")
        vault = client.beta.vaults.create(display_name="mcp")
        credential = client.beta.vaults.credentials.create(
            vault.id, auth={"type": "static_bearer", "mcp_server_url": url, "token": TOKEN})
        agent, environment = mcp_agent(client, url)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              vault_ids=[vault.id])
        events = turn(server, client, session.id,
                      reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}), reply.text("five"))
        [use] = [e for e in events if e["type"] == "agent.mcp_tool_use"]
        assert (use["mcp_server_name"], use["name"], use["input"]) == ("calc", "add",
                                                                       {"a": 2, "b": 3})
        [result] = [e for e in events if e["type"] == "agent.mcp_tool_result"]
        assert (result["mcp_tool_use_id"], result["is_error"]) == (use["id"], False)
        assert "5" in json.dumps(result["content"])
        assert not any(e["type"] == "session.error" for e in events), events
        sent = last_tool_result(server)
        assert not sent.get("is_error") and "5" in json.dumps(sent["content"])
        offered = {t["name"] for r in server.requests for t in (r.body or {}).get("tools", [])}
        assert {"mcp__calc__add", "mcp__calc__echo_header"} <= offered
        assert "mcp__calc__wait" not in offered  # disabled in the toolset's configs
        strict(list(client.beta.sessions.events.list(session.id)))
        calls = mcp.rpc_methods().count("tools/call")

        client.beta.vaults.credentials.archive(credential.id, vault_id=vault.id)
        events = turn(server, client, session.id,
                      reply.tool_use("mcp__calc__add", {"a": 1, "b": 1}), reply.text("no"))
        [error] = [e["error"] for e in events if e["type"] == "session.error"]
        assert (error["type"], error["mcp_server_name"]) == (
            "mcp_authentication_failed_error", "calc")
        assert "no active credential" in error["message"]
        [failed] = [e for e in events if e["type"] == "agent.mcp_tool_result"]
        assert failed["is_error"] is True
        assert last_tool_result(server).get("is_error") is True
        assert mcp.rpc_methods().count("tools/call") == calls  # never sent without a token
        credentials_validated(client, url)


def credentials_validated(client: Any, url: str) -> None:
    """`mcp_oauth_validate` probes the server with the credential's token."""
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    vault = client.beta.vaults.create(display_name="oauth")
    credentials = client.beta.vaults.credentials
    good = credentials.create(vault.id, auth={"type": "mcp_oauth", "mcp_server_url": url,
                                              "access_token": TOKEN, "expires_at": later})
    checked = credentials.mcp_oauth_validate(good.id, vault_id=vault.id)
    strict(checked)
    assert (checked.status, checked.credential_id, checked.mcp_probe) == ("valid", good.id,
                                                                          None)
    credentials.update(good.id, vault_id=vault.id,
                       auth={"type": "mcp_oauth", "access_token": "wrong"})
    checked = credentials.mcp_oauth_validate(good.id, vault_id=vault.id)
    assert checked.status == "invalid" and checked.mcp_probe.method == "initialize"
