"""A served agent's MCP connections go only to public addresses, checked at each
connection and connected to as checked (`wisp.serve.session_mcp.build_server`), so a
name that passed the check cannot resolve somewhere private when the socket opens (DNS
rebinding). The service's own up-front check is bypassed here on purpose: this is the
second wall."""

from __future__ import annotations

import asyncio
import socket

from wisp.serve.session_mcp import ALLOW_PRIVATE, build_server


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_each_connection_goes_to_an_address_checked_public() -> None:
    url = f"http://localhost:{_closed_port()}/mcp"  # localhost: a name, not a literal

    async def attempt(env: dict[str, str]) -> str:
        server = build_server("docs", url, {}, env)
        try:
            await server.connect()
        finally:
            await server.close()
        assert server.status == "failed"
        return str(server.error)

    refused = asyncio.run(attempt({}))
    assert "not a public address" in refused, refused
    allowed = asyncio.run(attempt({ALLOW_PRIVATE: "1"}))  # the operator's opt-in
    assert "not a public address" not in allowed, allowed  # it got as far as the socket
