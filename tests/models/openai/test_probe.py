"""`wisp --probe --model <spec>` against scripted server personalities."""

from __future__ import annotations

import json

from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply


def test_a_server_with_working_tools_passes_every_check(oa_wisp: Runner,
                                                        server: ScriptedServer) -> None:
    server.script(reply.text("ok"), reply.tool_use("get_time", {}),
                  reply.tool_uses([("get_time", {}), ("get_date", {})]), reply.text("noon"))
    run = oa_wisp("--probe", "--model", "openai:qwen")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("ok    ") == 4
    assert "2 in one answer" in run.stdout


def test_tool_calls_written_as_text_name_the_server_flag(oa_wisp: Runner,
                                                         server: ScriptedServer) -> None:
    as_text = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    server.script(reply.text("ok"), reply.text(as_text), reply.text(as_text),
                  reply.text("noon"))
    run = oa_wisp("--probe", "--model", "openai:qwen")
    assert run.returncode == 1
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("FAIL  tool call:"))
    assert "--jinja" in line and "--enable-auto-tool-choice" in line
    assert "text_tool_call_fallback" in line


def test_a_rejected_field_is_reported(oa_wisp: Runner, server: ScriptedServer) -> None:
    rejected = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    server.script(reply.openai_raw([rejected], status=400), reply.text("ok"),
                  reply.tool_use("get_time", {}), reply.tool_use("get_time", {}),
                  reply.text("noon"))
    run = oa_wisp("--probe", "--model", "openai:qwen")
    assert "rejected stream_options" in run.stdout
    assert "stream_options" not in json.dumps(server.requests[-1].body)


def test_probe_needs_a_model(oa_wisp: Runner) -> None:
    run = oa_wisp("--probe", env={"ANTHROPIC_MODEL": ""})
    assert run.returncode == 1
    assert "--probe needs --model" in run.stderr
