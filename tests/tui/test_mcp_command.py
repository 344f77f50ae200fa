"""/mcp in the terminal UI, driven in tmux: every configured server, local or remote,
from --mcp-config and from the project's settings, with its status, whether it needs a
sign-in, and its tools or why it failed."""

from __future__ import annotations

import json
import re

from tests.mcp.conftest import calc_entry, needs_mcp
from tests.mcp.remote_servers import refused_url, served
from tests.mcp.test_remote_http import UNAUTHORIZED
from tests.tui.harness import TuiSetup, message_requests

pytestmark = needs_mcp


def test_mcp_lists_servers_with_status_auth_and_tools(tui: TuiSetup) -> None:
    with refused_url() as refused, served(UNAUTHORIZED) as locked:
        (tui.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {
            "calc": calc_entry(tui.cwd.parent / "calc.pid")}}))
        config = json.dumps({"mcpServers": {
            "down": {"type": "http", "url": refused},
            "locked": {"type": "http", "url": locked.url("/mcp")}}})
        (tui.home / "mcp.json").write_text(config)
        term = tui.terminal("--mcp-config", str(tui.home / "mcp.json"))
        term.ready(timeout=20)
        term.submit("/mcp")
        screen = term.wait_for(r"^locked\s", timeout=30)
    assert re.search(r"^server\s+status\s+auth\s+tools", screen, re.MULTILINE), screen
    assert re.search(r"^locked\s+needs-auth\s+needs sign-in\s+authorization required",
                     screen, re.MULTILINE), screen
    # The project's own server (.mcp.json, a trusted folder), local: no sign-in.
    assert re.search(r"^calc\s+connected\s+-\s+\S", screen, re.MULTILINE), screen
    assert re.search(r"^down\s+failed\s+none\s+.*Connection", screen, re.MULTILINE), screen
    assert message_requests(tui) == []
