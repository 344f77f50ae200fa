"""MCP OAuth against a local authorization server (tests/mcp/oauth_servers.py): a server
that answers 401 is `needs-auth`; `mcp_authenticate` answers the authorization URL; the
browser's round trip (here, a plain HTTP client) reaches wisp's 127.0.0.1 listener, the
code is exchanged with PKCE, the server connects and its tools run; the token is kept for
this user, so the next session connects at once, until `mcp_clear_auth`."""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlparse

from tests.mcp.conftest import needs_mcp
from tests.mcp.oauth_servers import oauth_app
from tests.mcp.remote_servers import served
from wisp.testing import reply


def _browse(url: str) -> str:
    """GET `url` without following redirects; the Location it answers."""
    parts = urlparse(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request("GET", parts.path + "?" + parts.query)
    response = conn.getresponse()
    location = response.getheader("location") or ""
    response.read()
    conn.close()
    return location


def _status(proc, name: str = "web") -> dict:
    servers = proc.call("mcp_status")["response"]["mcpServers"]
    return next(s for s in servers if s["name"] == name)


def _connected(proc, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entry = _status(proc)
        if entry["status"] == "connected":
            return entry
        time.sleep(0.1)
    raise AssertionError(f"never connected: {entry}")


@needs_mcp
def test_the_oauth_flow_authorizes_a_server(duplex, server, wisp):
    app, state = oauth_app()
    server.script(reply.tool_use("mcp__web__add", {"a": 2, "b": 3}), reply.text("5"))
    with served(app) as remote:
        config = json.dumps({"mcpServers": {"web": {"type": "http",
                                                    "url": remote.url("/mcp")}}})
        proc = duplex("--mcp-config", config, "--allowedTools", "mcp__web")
        proc.initialize()
        assert _status(proc)["status"] == "needs-auth"
        started = proc.call("mcp_authenticate", serverName="web")["response"]
        assert (started["requiresUserAction"], started["callbackExpected"]) == (True, False)
        redirect = _browse(started["authUrl"])  # the user approves in the browser
        assert redirect.startswith("http://127.0.0.1:") and "code=" in redirect
        assert _browse(redirect) == ""  # the redirect reaches wisp's listener
        entry = _connected(proc)
        assert "add" in [t["name"] for t in entry["tools"]]
        proc.user("add")
        assert proc.wait_frame("result")["result"] == "5"
        assert proc.finish() == 0
        assert state["tokens_issued"] == 1
        assert state["registered"][0]["token_endpoint_auth_method"] == "none"
        stored = wisp.home / ".wisp" / "mcp-oauth.json"
        assert stored.stat().st_mode & 0o777 == 0o600
        # The next session starts authorized; mcp_clear_auth forgets the token.
        again = duplex("--mcp-config", config)
        again.initialize()
        assert _status(again)["status"] == "connected"
        assert again.call("mcp_clear_auth", serverName="web")["subtype"] == "success"
        assert again.finish() == 0
        third = duplex("--mcp-config", config)
        third.initialize()
        assert _status(third)["status"] == "needs-auth"
        assert third.finish() == 0


@needs_mcp
def test_a_host_that_catches_the_redirect_hands_it_back(duplex, server):
    app, state = oauth_app()
    with served(app) as remote:
        config = json.dumps({"mcpServers": {"web": {"type": "http",
                                                    "url": remote.url("/mcp")}}})
        proc = duplex("--mcp-config", config)
        proc.initialize()
        started = proc.call("mcp_authenticate", serverName="web",
                            redirectUri="https://host.example/callback")["response"]
        assert started["callbackExpected"] is True
        redirect = _browse(started["authUrl"])
        assert redirect.startswith("https://host.example/callback?code=")
        wrong = proc.call("mcp_oauth_callback_url", serverName="web",
                          callbackUrl=redirect.replace("state=", "state=x"))
        assert "state" in wrong["error"]
        done = proc.call("mcp_oauth_callback_url", serverName="web", callbackUrl=redirect)
        assert done["subtype"] == "success"
        assert _connected(proc)["status"] == "connected"
        assert proc.finish() == 0
        assert state["registered"][0]["redirect_uris"] == ["https://host.example/callback"]
