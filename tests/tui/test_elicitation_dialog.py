"""An MCP server that asks the user mid-call, in the terminal UI (tmux): the dialog shows
the server's question and fields, 1 answers field by field, 2 declines, Esc cancels; a URL
request shows the link. The server is written with the `mcp` package
(tests/mcp/elicit_mcp_server.py); what it received comes back as the tool's result."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import mcp_config, needs_mcp
from tests.tui.harness import TuiSetup, message_requests, wait_requests
from wisp.testing import reply

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "elicit_mcp_server.py"
CONFIG = mcp_config(elicit={"command": sys.executable, "args": [str(SERVER)]})
ASKS = "The MCP server elicit asks:"
pytestmark = needs_mcp


def _said(tui: TuiSetup) -> Any:
    """What the server received, as its tool reported it to the model."""
    body = wait_requests(tui, 2)[1].body or {}
    [result] = [b for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]
    content = result["content"]
    return json.loads(content if isinstance(content, str) else content[0]["text"])


def _start(tui: TuiSetup, tool: str) -> Any:
    tui.server.script(reply.tool_use(f"mcp__elicit__{tool}", {}), reply.text("all done"))
    term = tui.terminal("--mcp-config", CONFIG, "--allowedTools", "mcp__elicit")
    term.ready(timeout=20)
    term.submit("go")
    return term


def test_a_form_is_answered_field_by_field(tui: TuiSetup) -> None:
    term = _start(tui, "who")
    screen = term.wait_for(ASKS, timeout=20)
    assert "Who are you?" in screen and "name (string)" in screen
    assert len(message_requests(tui)) == 1  # the tool waits on the answer
    term.keys("1")
    term.wait_for(r"^name:")
    term.type("Ada Lovelace")
    term.keys("Enter")
    term.wait_for("all done")
    assert _said(tui) == {"action": "accept", "data": {"name": "Ada Lovelace"}}
    assert "elicit: accept" in term.scrollback()


@pytest.mark.parametrize(("key", "action"), [("2", "decline"), ("Escape", "cancel")])
def test_2_declines_and_esc_cancels(tui: TuiSetup, key: str, action: str) -> None:
    term = _start(tui, "who")
    term.wait_for(ASKS, timeout=20)
    term.keys(key)
    term.wait_for("all done")
    assert _said(tui) == {"action": action, "data": None}


def test_esc_in_a_field_cancels_the_whole_form(tui: TuiSetup) -> None:
    term = _start(tui, "who")
    term.wait_for(ASKS, timeout=20)
    term.keys("1")
    term.wait_for(r"^name:")
    term.keys("Escape")
    term.wait_for("all done")
    assert _said(tui) == {"action": "cancel", "data": None}


def test_a_url_request_shows_the_link(tui: TuiSetup) -> None:
    term = _start(tui, "login")
    screen = term.wait_for(ASKS, timeout=20)
    assert "Sign in, please" in screen and "https://example.test/login" in screen
    term.keys("1")
    term.wait_for("all done")
    assert _said(tui) == {"action": "accept"}
    assert "elicit: e-7 is done" in term.scrollback()  # the server said the sign-in ended
