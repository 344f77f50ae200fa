"""MCP roots, as the reference offers them (measured: it declares
`roots: {listChanged: true}` and answers `roots/list` with the working folder and each added
one, a `file://` uri each, nothing else): a server asks wisp for its roots and gets the
same; a folder added at run time (`add_directory`) is announced with
`notifications/roots/list_changed` and listed from then on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import mcp_config
from tests.refrun import Place, have_reference, print_run
from wisp.testing import ScriptedServer, reply

SERVER = Path(__file__).resolve().parent / "elicit_server.py"
CONFIG = mcp_config(elicit={"command": sys.executable, "args": [str(SERVER)]})


def _said(frames: list[dict], nth: int = 0) -> dict:
    results = [f for f in frames if f.get("type") == "user"
               and f["message"]["content"][0].get("type") == "tool_result"]
    return json.loads(results[nth]["message"]["content"][0]["content"][0]["text"])


def test_print_mode_lists_the_working_folder_and_added_ones(wisp, server, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    server.script(reply.tool_use("mcp__elicit__ask", {"roots": True}), reply.text("ok"))
    run = wisp("-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config",
               CONFIG, "--allowedTools", "mcp__elicit", "--add-dir", str(extra))
    assert run.returncode == 0, run.stderr
    cwd = Path(next(f for f in run.frames if f.get("subtype") == "init")["cwd"])
    assert _said(run.frames) == {
        "roots": {"roots": [{"uri": cwd.resolve().as_uri()}, {"uri": extra.resolve().as_uri()}]},
        "error": None, "notified": []}


def test_a_folder_added_at_run_time_is_announced_and_listed(duplex, server, tmp_path):
    extra = tmp_path / "later"
    extra.mkdir()
    server.script(reply.tool_use("mcp__elicit__ask", {"roots": True}), reply.text("one"),
                  reply.tool_use("mcp__elicit__ask", {"roots": True}), reply.text("two"))
    proc = duplex("--mcp-config", CONFIG, "--allowedTools", "mcp__elicit")
    proc.initialize()
    proc.user("roots?")
    proc.wait_frame("result")
    before = _said(proc.frames)
    assert len(before["roots"]["roots"]) == 1 and before["notified"] == []
    assert proc.call("add_directory", path=str(extra))["subtype"] == "success"
    proc.user("and now?")
    proc.wait_frame("result", count=2)
    after = _said(proc.frames, 1)
    assert after["roots"]["roots"][1] == {"uri": extra.resolve().as_uri()}
    assert after["notified"] == ["notifications/roots/list_changed"]
    assert proc.finish() == 0


@pytest.mark.skipif(not have_reference(), reason="the reference CLI is not installed")
def test_the_reference_answers_alike(tmp_path):
    """Both CLIs, same server, same folders: the roots and capabilities a server sees, and
    the answer to an elicitation nobody can take (print mode), are the same."""
    seen = {}
    for which in ("reference", "wisp"):
        with ScriptedServer() as server:
            place = Place(tmp_path / which, server)
            server.script(reply.tool_use("mcp__elicit__ask", {"roots": True}),
                          reply.tool_use("mcp__elicit__ask", {}), reply.text("ok"))
            code, _, frames = print_run(
                which, place, "-p", "go", "--output-format", "stream-json", "--verbose",
                "--mcp-config", CONFIG, "--allowedTools", "mcp__elicit",
                "--add-dir", str(place.home))
            assert code == 0
            said = json.dumps([_said(frames), _said(frames, 1)])
            seen[which] = said.replace(str(tmp_path / which), "<tmp>")
    assert seen["wisp"] == seen["reference"]
