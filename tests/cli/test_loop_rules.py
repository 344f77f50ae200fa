"""The agent loop's stop/continue rules, seen end to end through `wisp -p`."""

from __future__ import annotations

import json

from wisp.testing import reply


def loop_forever(_body):
    return reply.tool_use("Bash", {"command": "echo again"})


def test_tool_round_trip(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("saw hi"))
    run = wisp("-p", "run echo", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0
    assert run.kinds() == ["system/init", "assistant", "user", "assistant", "result"]
    tool_frame = run.of_type("user")[0]
    block = tool_frame["message"]["content"][0]
    assert block["type"] == "tool_result" and block["content"].strip() == "hi"
    assert block["is_error"] is False
    assert tool_frame["tool_use_result"]["stdout"].strip() == "hi"
    assert tool_frame["parent_tool_use_id"] is None
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[2]["content"][0]["tool_use_id"] == second[1]["content"][0]["id"]
    assert run.result["num_turns"] == 2


def test_max_turns(wisp, server):
    server.script(reply.dynamic(loop_forever), reply.dynamic(loop_forever))
    run = wisp("-p", "loop", "--output-format", "json", "--max-turns", "1")
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["subtype"] == "error_max_turns"
    assert result["is_error"] is True
    assert result["errors"] == ["Reached maximum number of turns (1)"]
    assert "result" not in result
    assert result["num_turns"] == 2
    assert len(server.requests) == 1


def test_max_turns_text_output(wisp, server):
    server.script(reply.dynamic(loop_forever))
    run = wisp("-p", "loop", "--max-turns", "1")
    assert run.returncode == 1
    assert run.stdout == "Error: Reached max turns (1)"


def test_max_budget(wisp, server):
    usage = {"input_tokens": 12_000, "output_tokens": 30}
    server.script(reply.tool_use("Bash", {"command": "echo x"}, usage=usage), reply.text("no"))
    run = wisp("-p", "x", "--output-format", "json", "--max-budget-usd", "0.01")
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["subtype"] == "error_max_budget_usd"
    assert result["errors"] == ["Reached maximum budget ($0.01)"]
    assert result["total_cost_usd"] >= 0.01
    assert len(server.requests) == 1


def test_max_tokens_recovery_is_bounded(wisp, server):
    server.script(*[reply.max_tokens(f"part{i} ") for i in range(5)])
    run = wisp("-p", "long", "--output-format", "json")
    result = json.loads(run.stdout)
    # The first call plus at most three recovery continuations.
    assert len(server.requests) == 4
    assert result["stop_reason"] == "max_tokens"
    last = server.requests[3].body["messages"][-1]
    assert last["role"] == "user"


def test_cost_and_usage_are_reported(wisp, server):
    server.script(reply.text("hi", usage={"input_tokens": 1_000_000, "output_tokens": 0}))
    result = json.loads(wisp("-p", "x", "--output-format", "json").stdout)
    assert abs(result["total_cost_usd"] - 4.0) < 1e-9  # opus-5-5 lists $4 per Mtok input
    assert result["modelUsage"]["claude-opus-5-5"]["inputTokens"] == 1_000_000
    assert result["usage"]["input_tokens"] == 1_000_000


def test_unknown_model_costs_nothing(wisp, server):
    server.script(reply.text("hi", usage={"input_tokens": 5000, "output_tokens": 50}))
    result = json.loads(wisp("-p", "x", "--model", "local-llm", "--output-format", "json").stdout)
    assert result["total_cost_usd"] == 0


def test_broken_tool_input_json_is_reported_to_the_model(wisp, server):
    from wisp.testing.reply_kinds import RawReply, _encode

    events = [
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_broken", "name": "Bash", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"command": "echo hi"'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    server.script(RawReply(_encode(events)), reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    block = run.of_type("user")[0]["message"]["content"][0]
    assert block["is_error"] is True
    assert "not a valid JSON object" in block["content"]
