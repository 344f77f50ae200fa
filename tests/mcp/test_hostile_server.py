"""A hostile MCP server cannot flood the model or hold a run: `wisp -p` against
`hostile_server.py`, with what reached the model read back from the scripted API server.

Before: 1 MB and 30 MB results went to the model whole, and a reply nested deeper than
Python's parser recurses was dropped without a word, so its call waited for the ~28 h
tool timeout. Now results past MAX_MCP_OUTPUT_TOKENS are clipped with the whole saved to
a file the result names; a reply that can't be read fails its call at once (every
waiting call of that server when it names no id); and a silent call ends at
MCP_TOOL_TIMEOUT (default 10 minutes) with an error saying so.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.conftest import HERE, mcp_config
from wisp.mcp.results import CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS
from wisp.testing import reply

STREAM = ("--output-format", "stream-json", "--verbose")
HOSTILE = {"command": sys.executable, "args": [str(HERE / "hostile_server.py")]}
FLAGS = ("--mcp-config", mcp_config(hostile=HOSTILE), "--allowedTools", "mcp__hostile")
CAP = DEFAULT_MAX_TOKENS * CHARS_PER_TOKEN
SAVED = re.compile(r"all of it is in (\S+)\]")


def results_sent(server) -> list[dict]:
    """The tool_result blocks the model got, in order."""
    found = []
    for request in server.requests:
        body = request.body or {}
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "user" and isinstance(last.get("content"), list):
            found += [b for b in last["content"] if b.get("type") == "tool_result"]
    return found


def text_of(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def run_calls(wisp, server, calls: list[tuple[str, dict]], env: dict | None = None,
              timeout: float = 60):
    server.script(*(reply.tool_use(f"mcp__hostile__{name}", args) for name, args in calls),
                  reply.text("done"))
    started = time.monotonic()
    run = wisp("-p", "call the tools", *STREAM, *FLAGS, env=env, timeout=timeout)
    return run, time.monotonic() - started


@pytest.mark.timeout(120)
@pytest.mark.parametrize("chars", [1_000_000, 30_000_000], ids=["1MB", "30MB"])
def test_a_huge_result_is_clipped_and_saved_whole(wisp, server, chars):
    run, _ = run_calls(wisp, server, [("big", {"chars": chars}), ("echo", {"text": "after"})])
    assert run.returncode == 0, run.stderr[-2000:]
    big, after = results_sent(server)
    shown = text_of(big)
    assert len(shown) <= CAP, len(shown)
    assert shown.startswith(f"[MCP tool mcp__hostile__big returned {chars:,} characters")
    assert "MAX_MCP_OUTPUT_TOKENS" in shown and shown.endswith("xEND")
    saved = Path(SAVED.search(shown).group(1))
    try:
        whole = saved.read_text()
        assert len(whole) == chars and whole.endswith("END")
    finally:
        saved.unlink()
    # Every request stayed small: nothing past the cap reached the model, nor the frames.
    assert max(len(json.dumps(r.body)) for r in server.requests) < 3 * CAP
    assert len(run.stdout) < 6 * CAP
    assert text_of(after) == "after"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tool", ["deep", "invalid"])
def test_an_unreadable_reply_fails_its_call_at_once(wisp, server, tool):
    run, took = run_calls(wisp, server, [(tool, {}), ("echo", {"text": "still serving"})])
    assert run.returncode == 0, run.stderr[-2000:]
    assert took < 20
    failed, after = results_sent(server)
    assert failed["is_error"] is True
    why = "JSON nested too deeply" if tool == "deep" else "not valid JSON"
    assert text_of(failed).startswith(f"MCP tool mcp__hostile__{tool} failed: the server sent "
                                      f"a reply that cannot be read ({why}"), text_of(failed)
    assert text_of(after) == "still serving"  # one bad reply does not end the server


@pytest.mark.timeout(60)
def test_an_unreadable_reply_with_no_id_fails_the_waiting_call(wisp, server):
    run, took = run_calls(wisp, server, [("deep_anonymous", {}), ("echo", {"text": "ok"})])
    assert run.returncode == 0, run.stderr[-2000:]
    assert took < 20
    failed, after = results_sent(server)
    assert failed["is_error"] is True
    assert "cannot be read (JSON nested too deeply" in text_of(failed)
    assert text_of(after) == "ok"


@pytest.mark.timeout(60)
def test_a_silent_call_ends_at_the_tool_timeout(wisp, server):
    run, took = run_calls(wisp, server, [("silent", {})], env={"MCP_TOOL_TIMEOUT": "1500"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert took < 20
    [failed] = results_sent(server)
    assert failed["is_error"] is True
    assert text_of(failed) == ("MCP tool mcp__hostile__silent failed: tools/call timed out "
                               "after 1.5 s (MCP_TOOL_TIMEOUT, in ms, allows longer)")


def test_the_default_tool_timeout_is_ten_minutes():
    from wisp.mcp.stdio import StdioMcpServer

    assert StdioMcpServer("s", "true", [], {}, environ={}).tool_timeout == 600
