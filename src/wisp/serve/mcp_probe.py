"""`credentials.mcp_oauth_validate`: a live probe of a credential against its MCP server,
connected as a session would connect it (`wisp.serve.session_mcp`): the handshake and
the tool list, with the credential's token."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve.session_mcp import build_server, egress_refusal
from wisp.serve.store.offload import off_loop
from wisp.serve.vaults import Vaults


async def probe(vaults: Vaults, credential: Mapping[str, Any]) -> tuple[str, JSON | None]:
    """(`valid` | `invalid` | `unknown`, the failing step or None)."""
    url = str(credential["auth"]["mcp_server_url"])
    failing: JSON = {"method": "initialize", "http_response": None}
    try:
        token = await off_loop(vaults.store, vaults.bearer_for,
                               [str(credential["vault_id"])], url)
    except LookupError:
        return "invalid", None  # archived, expired, or no token stored: nothing to test
    if await egress_refusal(url, None, os.environ) is not None:
        return "unknown", failing
    server = build_server("probe", url, {"Authorization": f"Bearer {token}"}, os.environ)
    await server.connect()
    try:
        if server.status == "connected":
            return "valid", None
        return ("invalid" if server.status == "needs-auth" else "unknown"), failing
    finally:
        await server.close()
