"""Remote MCP servers over streamable HTTP (`"type": "http"`): they connect, list and run
their tools and report their status as stdio servers do; the entry's headers (with
`${VAR}` expanded) reach the server; a server that can't be reached is "failed" with the
reason, one that wants OAuth is "needs-auth", and the run goes on either way."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.mcp.conftest import mcp_config, needs_mcp, raw_entry
from tests.mcp.remote_servers import (
    Served,
    canned_app,
    moved,
    refused_url,
    remote_app,
    run,
    scripted_http_app,
    served,
    silent_port,
)
from tests.structured.test_import_cost import imported_modules
from wisp.errors import McpError
from wisp.mcp.config import Unavailable, build_server
from wisp.mcp.streamable_http import HttpMcpServer
from wisp.models.http import request
from wisp.testing import reply

pytestmark = needs_mcp  # the servers here run on uvicorn, which comes with `mcp`
STREAM = ("--output-format", "stream-json", "--verbose")
UNAUTHORIZED = canned_app(401, {
    "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/'
                        'oauth-protected-resource"',
    "content-type": "application/json"}, b'{"error":"invalid_token"}')


def tool_results(request) -> list[dict]:
    return [b for b in request.body["messages"][-1]["content"] if b["type"] == "tool_result"]


def statuses(proc) -> list[dict]:
    return proc.call("mcp_status", timeout=30)["response"]["mcpServers"]


def http_server(url: str, environ: dict[str, str] | None = None, **entry: Any) -> HttpMcpServer:
    server = build_server("web", {"type": "http", "url": url, **entry}, None, None,
                          environ or {})
    assert isinstance(server, HttpMcpServer)
    return server


def test_print_mode_runs_a_tool_and_sends_the_headers(wisp, server):
    server.script(reply.tool_use("mcp__web__add", {"a": 2, "b": 40}),
                  reply.tool_use("mcp__web__echo_header", {"name": "x-team"}),
                  reply.tool_use("mcp__web__echo_header", {"name": "x-tier"}),
                  reply.text("done"))
    with served(remote_app("http")) as remote:
        entry = {"type": "http", "url": remote.url("/mcp"),
                 "headers": {"X-Team": "${TEAM}", "X-Tier": "${TIER:-gold}"}}
        run_ = wisp("-p", "go", *STREAM, "--mcp-config", mcp_config(web=entry),
                    "--allowedTools", "mcp__web", env={"TEAM": "blue"})
    assert run_.returncode == 0, run_.stderr
    init = run_.of_type("system", "init")[0]
    assert init["mcp_servers"] == [{"name": "web", "status": "connected", "source": "http"}]
    assert {"mcp__web__add", "mcp__web__echo_header"} <= set(init["tools"])
    offered = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert offered["mcp__web__add"]["description"] == "Add two numbers."
    assert [r["content"] for r in (tool_results(server.requests[1])
                                   + tool_results(server.requests[2])
                                   + tool_results(server.requests[3]))] == [
        [{"type": "text", "text": "42"}],
        [{"type": "text", "text": "x-team=blue"}],
        [{"type": "text", "text": "x-tier=gold"}]]
    assert run_.result["result"] == "done"
    # The session: its id and the protocol version on every request after initialize,
    # and a DELETE when wisp is done with it.
    methods = remote.methods()
    assert methods[0] == "POST" and methods[-1] == "DELETE"
    first, *later = [headers for _, _, headers in remote.log]
    assert "mcp-session-id" not in first and first["x-team"] == "blue"
    assert {h["mcp-session-id"] for h in later} == {later[0]["mcp-session-id"]}
    assert all(h["mcp-protocol-version"] == "2025-06-18" for h in later)


def test_print_mode_goes_on_without_servers_it_cannot_reach(wisp, server):
    server.script(reply.text("fine without them"))
    with refused_url() as refused, served(UNAUTHORIZED) as locked:
        config = mcp_config(down={"type": "http", "url": refused},
                            locked={"type": "http", "url": locked.url("/mcp")})
        run_ = wisp("-p", "hi", *STREAM, "--mcp-config", config)
    assert run_.returncode == 0, run_.stderr
    init = run_.of_type("system", "init")[0]
    assert init["mcp_servers"] == [
        {"name": "down", "status": "failed", "source": "http"},
        {"name": "locked", "status": "needs-auth", "source": "http"}]
    assert not any(name.startswith("mcp__") for name in init["tools"])
    assert run_.result["result"] == "fine without them"


def test_status_says_why_a_server_failed_or_needs_auth(duplex):
    with refused_url() as refused, served(UNAUTHORIZED) as locked:
        config = mcp_config(down={"type": "http", "url": refused},
                            locked={"type": "http", "url": locked.url("/mcp"),
                                    "headers": {"Authorization": "Bearer ${NO_TOKEN:-}"}})
        proc = duplex("--mcp-config", config)
        down, needs_auth = statuses(proc)
        # Reconnecting cannot fix a missing authorization: the host is told so.
        again = proc.call("mcp_reconnect", timeout=30, serverName="locked")
        assert again["subtype"] == "error" and "authorization required" in again["error"]
        assert proc.finish() == 0
    assert down["status"] == "failed"
    assert down["error"] == (f"{refused}: Connection error: could not connect to "
                             f"127.0.0.1:{refused.split(':')[2].split('/')[0]} "
                             "(Connection refused)")
    assert down["config"] == {"type": "http", "url": refused}
    assert (down["transport"], down["scope"], down["source"]) == ("http", "dynamic", "dynamic")
    assert needs_auth["status"] == "needs-auth"
    assert needs_auth["error"].startswith(
        f"authorization required: {locked.url('/mcp')} answered 401 Unauthorized "
        '(WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1/')
    assert "authorize it (mcp_authenticate)" in needs_auth["error"]
    assert "tools" not in needs_auth and "headers" not in needs_auth["config"]


def test_mcp_set_servers_adds_an_http_server(duplex, server):
    server.script(reply.tool_use("mcp__web__add", {"a": 20, "b": 22}), reply.text("42 it is"))
    with served(remote_app("http")) as remote:
        proc = duplex("--allowedTools", "mcp__web")
        proc.initialize()
        answer = proc.call("mcp_set_servers", timeout=30,
                           servers={"web": {"type": "http", "url": remote.url("/mcp")}})
        assert answer["response"] == {"added": ["web"], "removed": [], "errors": {}}
        [web] = statuses(proc)
        assert web["status"] == "connected" and web["transport"] == "http"
        assert web["serverInfo"] == {"name": "remote", "version": "1.2.3"}
        assert web["tools"] == [{"name": "add", "annotations": {}},
                                {"name": "echo_header", "annotations": {}},
                                {"name": "wait", "annotations": {}}]
        proc.user("add")
        assert proc.wait_frame("result")["result"] == "42 it is"
        [result] = tool_results(server.requests[1])
        assert result["content"] == [{"type": "text", "text": "42"}]
        locked = proc.call("mcp_set_servers", timeout=30,
                           servers={"web": {"type": "http", "url": remote.url("/nope")}})
        assert "answered 404" in locked["response"]["errors"]["web"]
        assert proc.finish() == 0
    assert "DELETE" in remote.methods()  # the replaced server's session was ended


def test_json_answers_and_a_new_session_when_the_server_forgets_one():
    async def scenario(url: str) -> tuple[str, str, Any]:
        web = http_server(url)
        await web.connect()
        first = web._session
        assert web.status == "connected" and first
        # The server ends the session behind wisp's back: the next call gets a 404, and
        # wisp starts a new session and sends the call again.
        gone = await request("DELETE", url, {"mcp-session-id": first,
                                             "mcp-protocol-version": "2025-06-18"})
        await gone.aclose()
        result = await web.call_tool("add", {"a": 1, "b": 2})
        second = web._session
        await web.close()
        return first, second or "", result

    with served(remote_app("http", json_response=True)) as remote:
        first, second, result = run(scenario(remote.url("/mcp")))
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert second and second != first
    assert [m for m, _, _ in remote.log].count("POST") == 8  # 3 + the 404 + 3 again + call


@pytest.mark.parametrize(("app", "why"), [
    (canned_app(500, {"content-type": "application/json"},
                b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"db down"}}'),
     "answered 500 Internal Server Error: db down"),
    (canned_app(200, {"content-type": "text/html"}, b"<html>hello</html>"),
     "answered initialize with text/html, not JSON or an event stream"),
    (canned_app(200, {"content-type": "application/json"}, b"<html>"),
     "sent something that is not JSON-RPC: '<html>'"),
    (canned_app(202, {}, b""), "accepted initialize but sent no answer"),
])
def test_a_server_that_answers_wrongly_is_failed_with_the_reason(app, why):
    with served(app) as remote:
        web = http_server(remote.url("/mcp"))
        run(web.connect())
    assert web.status == "failed"
    assert web.error == f"{remote.url('/mcp')} {why}"


def test_a_silent_server_times_out_and_a_bad_entry_is_failed():
    with silent_port() as url:
        web = http_server(url, {"MCP_TIMEOUT": "200"})
        run(web.connect())
    assert (web.status, web.error) == ("failed", "initialize timed out after 0.2 s")
    for entry, why in [({"url": "ftp://x"}, "`url` must be an http:// or https:// URL, not 'ftp://x'"),
                       ({"url": "http://127.0.0.1:1/${NOPE}"},
                        "missing environment variable(s): NOPE"),
                       ({"url": "http://127.0.0.1:1", "headers": {"A": "b\r\nC: d"}},
                        "header 'A' has a name or value HTTP can't carry"),
                       ({"url": "http://127.0.0.1:1", "headers": {"A": 1}},
                        "`headers` must be an object of strings")]:
        bad = build_server("x", {"type": "http", **entry}, None, None, {})
        assert isinstance(bad, Unavailable) and bad.error == f"invalid config: {why}"


@pytest.mark.parametrize("how", ["interrupted", "timed out"])
def test_a_call_nobody_waits_for_is_cancelled_and_closing_leaves_nothing(how):
    async def scenario(remote: Served) -> str:
        web = http_server(remote.url("/mcp"), {"MCP_TOOL_TIMEOUT": "300"}
                          if how == "timed out" else {})
        await web.connect()
        call = asyncio.ensure_future(web.call_tool("wait", {"seconds": 30}))
        while "tools/call" not in remote.rpc_methods():
            await asyncio.sleep(0.01)
        if how == "interrupted":
            call.cancel()
        with pytest.raises((asyncio.CancelledError, McpError)) as ended:
            await call
        while "notifications/cancelled" not in remote.rpc_methods():
            await asyncio.sleep(0.01)
        await web.close()  # run() checks that no task is left
        return str(ended.value)

    with served(remote_app("http")) as remote:
        started = time.monotonic()
        error = run(asyncio.wait_for(scenario(remote), 20))
        assert time.monotonic() - started < 10
    if how == "timed out":
        assert error == "tools/call timed out after 0.3 s (MCP_TOOL_TIMEOUT, in ms, allows longer)"
    call = next(m for m in remote.posted if m.get("method") == "tools/call")
    cancelled = next(m for m in remote.posted if m.get("method") == "notifications/cancelled")
    assert cancelled["params"] == {"requestId": call["id"], "reason": f"wisp: {how}"}
    assert remote.methods()[-1] == "DELETE"


def test_the_transports_load_only_for_a_remote_server(wisp, server, pid_file):
    server.script(reply.text("hi"), reply.text("hi"))
    remote = {"wisp.mcp.remote", "wisp.mcp.streamable_http", "wisp.mcp.legacy_sse"}
    stdio = imported_modules(wisp, "-p", "hi", "--mcp-config",
                             mcp_config(raw=raw_entry(pid_file)))
    assert "wisp.mcp.stdio" in stdio and not remote & stdio
    with refused_url() as url:
        http = imported_modules(wisp, "-p", "hi", "--mcp-config",
                                mcp_config(web={"type": "http", "url": url}))
    assert remote & http == {"wisp.mcp.remote", "wisp.mcp.streamable_http"}
    assert not any(m.split(".")[0] == "mcp" for m in http)  # the SDK's package: never


def test_redirects_are_followed_on_the_same_origin_only():
    async def scenario(url: str) -> Any:
        web = http_server(url)
        await web.connect()
        assert web.status == "connected", web.error
        result = await web.call_tool("add", {"a": 5, "b": 5})
        await web.close()
        return result

    app = moved(moved(remote_app("http"), "/old", "/mcp"), "/far", "http://127.0.0.2:9/mcp")
    with served(app) as remote:
        result = run(scenario(remote.url("/old")))
        far = http_server(remote.url("/far"))
        run(far.connect())
    assert result["content"] == [{"type": "text", "text": "10"}]
    assert far.status == "failed"
    assert far.error == (f"{remote.url('/far')} redirects to another origin "
                         "(http://127.0.0.2:9/mcp): configure that URL if it is meant")


def test_requests_and_notifications_in_an_answer_stream():
    async def scenario(remote: Served) -> tuple[Any, list[str]]:
        web = http_server(remote.url("/mcp"))
        changed = asyncio.Event()
        web.on_tools_changed = changed.set
        await web.connect()
        result = await web.call_tool("grow", {})
        await asyncio.wait_for(changed.wait(), 5)  # tools/list_changed: listed again
        while not {"srv-1", "srv-2"} <= {m.get("id") for m in remote.posted}:
            await asyncio.sleep(0.01)  # the answers to the server's two requests
        await web.close()
        return result, [t["name"] for t in web.tools]

    with served(scripted_http_app()) as remote:
        result, tools = run(asyncio.wait_for(scenario(remote), 20))
    assert result["content"] == [{"type": "text", "text": "grown"}]
    assert tools == ["grow", "extra"]
    answers = {m["id"]: m for m in remote.posted if "method" not in m}
    assert answers["srv-1"] == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    assert answers["srv-2"]["error"]["code"] == -32601
    # The version initialize settled on goes with every later request.
    assert {h.get("mcp-protocol-version") for _, _, h in remote.log[1:]} == {"2025-03-26"}
