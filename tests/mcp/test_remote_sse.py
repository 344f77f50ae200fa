"""Remote MCP servers over the legacy HTTP+SSE transport (`"type": "sse"`): the stream's
`endpoint` event says where to POST, answers come back on the stream; a stream that ends
makes the server "failed", as a stdio server's exit does."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.mcp.conftest import mcp_config, needs_mcp
from tests.mcp.remote_servers import (
    Served,
    canned_app,
    endpoint_app,
    remote_app,
    run,
    served,
    silent_port,
)
from wisp.errors import McpError
from wisp.mcp.config import build_server
from wisp.mcp.legacy_sse import SseMcpServer
from wisp.testing import reply

pytestmark = needs_mcp  # the servers here run on uvicorn, which comes with `mcp`
STREAM = ("--output-format", "stream-json", "--verbose")


def sse_server(url: str, environ: dict[str, str] | None = None) -> SseMcpServer:
    server = build_server("old", {"type": "sse", "url": url, "headers": {"X-Key": "k"}},
                          None, None, environ or {})
    assert isinstance(server, SseMcpServer)
    return server


def test_print_mode_runs_a_tool_over_sse(wisp, server):
    server.script(reply.tool_use("mcp__old__add", {"a": 2, "b": 40}),
                  reply.tool_use("mcp__old__echo_header", {"name": "x-key"}),
                  reply.text("done"))
    with served(remote_app("sse")) as remote:
        entry = {"type": "sse", "url": remote.url("/sse"), "headers": {"X-Key": "${KEY}"}}
        run_ = wisp("-p", "go", *STREAM, "--mcp-config", mcp_config(old=entry),
                    "--allowedTools", "mcp__old", env={"KEY": "s3cret"})
    assert run_.returncode == 0, run_.stderr
    init = run_.of_type("system", "init")[0]
    assert init["mcp_servers"] == [{"name": "old", "status": "connected", "source": "sse"}]
    assert {"mcp__old__add", "mcp__old__echo_header"} <= set(init["tools"])
    added = server.requests[1].body["messages"][-1]["content"][0]
    assert added["content"] == [{"type": "text", "text": "42"}]
    echoed = server.requests[2].body["messages"][-1]["content"][0]
    assert echoed["content"] == [{"type": "text", "text": "x-key=s3cret"}]
    assert run_.result["result"] == "done"
    # One stream, then every message POSTed where its endpoint event said, headers on all.
    assert [(m, p) for m, p, _ in remote.log][:2] == [("GET", "/sse"), ("POST", "/messages/")]
    assert all(headers["x-key"] == "s3cret" for _, _, headers in remote.log)


def test_a_stream_that_ends_makes_the_server_failed():
    async def scenario(remote: Served) -> tuple[str, list[str]]:
        old = sse_server(remote.url("/sse"))
        await old.connect()
        assert old.status == "connected" and old.as_tools()
        await asyncio.to_thread(remote.stop)  # the server goes away: its stream ends
        for _ in range(500):
            if old.status != "connected":
                break
            await asyncio.sleep(0.01)
        with pytest.raises(McpError) as failed:
            await old.call_tool("add", {"a": 1, "b": 1})
        await old.close()
        return old.status, [str(old.error), str(failed.value)]

    remote = Served(remote_app("sse"))
    status, errors = run(scenario(remote))
    assert status == "failed" and not sse_server(remote.url("/sse")).as_tools()
    # Shut down with the stream open, uvicorn cuts it mid-chunk: the reason says so.
    assert errors[0] == errors[1] == (f"{remote.url('/sse')}: event stream failed: Response "
                                      "body ended early: connection closed inside chunked "
                                      "framing")


@pytest.mark.parametrize(("app", "status", "why"), [
    (canned_app(401, {"www-authenticate": "Bearer"}, b""), "needs-auth",
     "authorization required: {url} answered 401 Unauthorized (WWW-Authenticate: Bearer)"),
    (canned_app(200, {"content-type": "application/json"}, b"{}"), "failed",
     "{url} answered with application/json, not an event stream"),
    (canned_app(200, {"content-type": "text/event-stream"}, b"data: hi\n\n"), "failed",
     "{url} ended its event stream without naming an endpoint"),
    (endpoint_app("http://127.0.0.2:9/messages"), "failed",
     "{url} named an endpoint on another origin: http://127.0.0.2:9/messages"),
])
def test_a_server_that_cannot_be_used_says_why(app, status, why):
    with served(app) as remote:
        old = sse_server(remote.url("/sse"))
        run(old.connect())
    assert old.status == status
    assert str(old.error).startswith(why.format(url=remote.url("/sse")))
    assert [m for m, _, _ in remote.log] == ["GET"]  # nothing was POSTed anywhere


def test_a_stream_without_an_endpoint_times_out():
    with silent_port() as url:
        old = sse_server(url, {"MCP_TIMEOUT": "200"})
        started = time.monotonic()
        run(old.connect())
    assert (old.status, old.error) == ("failed", f"{url} named no endpoint within 0.2 s")
    assert time.monotonic() - started < 5
