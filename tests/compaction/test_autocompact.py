"""Auto-compaction replaces old history with a summary once the context fills up."""

from __future__ import annotations

import json

from wisp.testing import reply

BIG = {"input_tokens": 5000, "output_tokens": 10}


def test_long_history_is_summarised_before_the_next_call(wisp, server, tmp_path):
    log = tmp_path / "precompact.ndjson"
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreCompact": [{"hooks": [
        {"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}]}}))
    wisp.trust()
    server.script(
        reply.tool_use("Bash", {"command": "echo one"}, usage=BIG),
        reply.tool_use("Bash", {"command": "echo two"}, usage=BIG),
        reply.text("THE SUMMARY"),          # the compaction call
        reply.text("finished"))
    run = wisp("-p", "work", "--output-format", "stream-json", "--verbose",
               env={"WISP_AUTOCOMPACT_TOKENS": "4000"})
    assert run.returncode == 0, run.stderr
    boundary = run.of_type("system", "compact_boundary")
    assert len(boundary) == 1 and boundary[0]["compact_metadata"]["trigger"] == "auto"
    summary_request = server.requests[2].body["messages"]
    assert "summary" in json.dumps(summary_request[-1]).lower()
    after = server.requests[3].body["messages"]
    assert "THE SUMMARY" in json.dumps(after[0])
    # The last tool_use and its result survive verbatim, still paired.
    assert after[1]["role"] == "assistant" and after[1]["content"][0]["type"] == "tool_use"
    assert after[2]["content"][0]["tool_use_id"] == after[1]["content"][0]["id"]
    assert len(after) == 3
    event = json.loads(log.read_text().splitlines()[0])
    assert event["hook_event_name"] == "PreCompact" and event["trigger"] == "auto"
    assert run.result["result"] == "finished"


def test_no_compaction_below_the_threshold(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo one"}, usage=BIG), reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert not run.of_type("system", "compact_boundary")
    assert len(server.requests) == 2


def test_a_pre_compact_hook_can_veto(wisp, server):
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreCompact": [{"hooks": [
        {"type": "command", "command": "echo no >&2; exit 2"}]}]}}))
    wisp.trust()
    server.script(reply.tool_use("Bash", {"command": "echo one"}, usage=BIG),
                  reply.tool_use("Bash", {"command": "echo two"}, usage=BIG),
                  reply.text("done"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose",
               env={"WISP_AUTOCOMPACT_TOKENS": "4000"})
    assert not run.of_type("system", "compact_boundary")
    assert run.result["result"] == "done"
