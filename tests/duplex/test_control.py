"""Control requests the SDKs send, with the reference's answer shapes (docs/protocol.md)."""

from __future__ import annotations

from wisp.testing import reply

MODES = "acceptEdits, auto, bypassPermissions, default, dontAsk, plan"


def test_initialize_answer_describes_the_cli(duplex):
    wisp = duplex()
    answer = wisp.initialize()["response"]
    for key in (
        "commands",
        "agents",
        "models",
        "account",
        "output_style",
        "available_output_styles",
    ):
        assert key in answer
    assert answer["hooks_applied"] is True
    assert answer["hook_on_failure_supported"] is True
    assert {m["value"] for m in answer["models"]} >= {"default", "sonnet", "opus", "haiku"}
    assert answer["account"]["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert wisp.finish() == 0


def test_initialize_acknowledges_what_it_carried(duplex):
    wisp = duplex()
    answer = wisp.initialize(
        settings={"model": "sonnet"},
        disallowedTools=["WebFetch"],
        agents={"reviewer": {"description": "Reviews code", "prompt": "Review."}},
        title="My session",
    )["response"]
    assert answer["settings_applied"] is True
    assert answer["disallowed_tools_applied"] is True
    assert answer["agents"] == [{"name": "reviewer", "description": "Reviews code"}]
    assert wisp.finish() == 0


def test_initialize_disallowed_tools_remove_them_from_the_model(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    wisp.initialize(disallowedTools=["WebFetch"])
    wisp.user("hi")
    init = wisp.wait_frame("system", "init")
    assert wisp.finish() == 0
    assert "WebFetch" not in init["tools"]
    assert "WebFetch" not in [t["name"] for t in server.requests[0].body["tools"]]


def test_initialize_system_prompt_array_and_append(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex("--system-prompt", "from argv")
    wisp.initialize(systemPrompt=["Custom prompt from TS."], appendSystemPrompt="Appended.")
    wisp.user("hi")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    system = str(server.requests[0].body["system"])
    assert "Custom prompt from TS." in system and "Appended." in system
    assert "from argv" not in system


def test_set_permission_mode_answers_mode_and_a_status_frame(duplex, server, tmp_path):
    target = tmp_path / "work" / "acc.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "x\n"}), reply.text("done")
    )
    wisp = duplex()
    wisp.initialize()
    response = wisp.call("set_permission_mode", mode="acceptEdits")
    assert response == {
        "subtype": "success",
        "request_id": response["request_id"],
        "response": {"mode": "acceptEdits"},
    }
    status = wisp.wait_frame("system", "status")
    assert status["permissionMode"] == "acceptEdits" and status["status"] is None
    wisp.user("write it")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert target.read_text() == "x\n"  # the next Write ran without a prompt
    assert wisp.of("system", "init")[0]["permissionMode"] == "acceptEdits"


def test_set_permission_mode_rejects_a_bad_mode(duplex):
    wisp = duplex()
    response = wisp.call("set_permission_mode", mode="bogusMode")
    assert response["subtype"] == "error"
    assert response["error"] == f"Cannot set permission mode: must be one of {MODES}"
    assert response["error_code"] == "invalid_mode"
    assert wisp.finish() == 0


def test_set_model_resolves_aliases_and_null_means_default(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    assert wisp.call("set_model", model="claude-sonnet-4-5-20250929")["response"] == {
        "model": "claude-sonnet-4-5-20250929"
    }
    assert wisp.call("set_model", model=None)["response"] == {"model": "claude-opus-5-5"}
    assert wisp.call("set_model", model="sonnet")["response"] == {"model": "claude-sonnet-5-5"}
    wisp.user("hi")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert server.requests[0].body["model"] == "claude-sonnet-5-5"
    assert wisp.of("system", "init")[0]["model"] == "claude-sonnet-5-5"


def test_set_max_thinking_tokens_succeeds_without_a_body(duplex, server):
    """A budget for a classic model (a current one thinks adaptively, as the reference's
    requests do: tests/request_parity); 0 turns thinking off; the display can change."""
    server.script(reply.text("ok"), reply.text("ok"), reply.text("ok"))
    wisp = duplex("--model", "claude-sonnet-4-5-20250929")
    response = wisp.call("set_max_thinking_tokens", max_thinking_tokens=2048)
    assert response["subtype"] == "success" and "response" not in response
    wisp.user("hi")
    wisp.wait_frame("result")
    wisp.call("set_max_thinking_tokens", thinking_display="summarized")
    wisp.user("again")
    wisp.wait_frame("result", count=2)
    wisp.call("set_max_thinking_tokens", max_thinking_tokens=0)
    wisp.user("and again")
    wisp.wait_frame("result", count=3)
    assert wisp.finish() == 0
    assert [r.body["thinking"] for r in server.requests] == [
        {"type": "enabled", "budget_tokens": 2048, "display": "omitted"},
        {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
        {"type": "disabled"}]


def test_get_context_usage_estimates_by_category(duplex, server):
    server.script(reply.text("a fairly short answer"))
    wisp = duplex()
    before = wisp.call("get_context_usage")["response"]
    wisp.user("a question " * 50)
    wisp.wait_frame("result")
    after = wisp.call("get_context_usage")["response"]
    assert wisp.finish() == 0
    for usage in (before, after):
        assert {
            "categories",
            "totalTokens",
            "maxTokens",
            "rawMaxTokens",
            "percentage",
            "model",
            "isAutoCompactEnabled",
            "memoryFiles",
            "mcpTools",
            "agents",
            "gridRows",
        } <= usage.keys()
        assert usage["totalTokens"] == sum(
            c["tokens"] for c in usage["categories"] if c["kind"] != "free"
        )
    messages = {c["id"]: c["tokens"] for c in after["categories"]}["messages"]
    assert messages >= len("a question " * 50) // 4 > 0
    assert after["totalTokens"] > before["totalTokens"]


def test_mcp_status_reconnect_toggle(duplex):
    wisp = duplex()
    assert wisp.call("mcp_status")["response"] == {"mcpServers": []}
    missing = wisp.call("mcp_reconnect", serverName="nope")
    assert missing["subtype"] == "error" and "nope" in missing["error"]
    assert wisp.call("mcp_toggle", serverName="nope", enabled=False)["subtype"] == "error"
    assert wisp.finish() == 0


def test_interrupt_while_idle_answers_still_queued(duplex):
    wisp = duplex()
    assert wisp.call("interrupt")["response"] == {"still_queued": []}
    assert wisp.finish() == 0
    assert wisp.results() == []


def test_unknown_subtype_is_unsupported(duplex):
    wisp = duplex()
    response = wisp.call("no_such_subtype_xyz")
    assert response == {
        "subtype": "error",
        "request_id": response["request_id"],
        "error": "Unsupported control request subtype: no_such_subtype_xyz",
        "error_code": "unsupported_request",
    }
    assert wisp.finish() == 0


def test_a_control_request_without_a_request_object_is_an_error(duplex):
    wisp = duplex()
    wisp.send({"type": "control_request", "request_id": "bad_1"})
    assert wisp.response_to("bad_1")["subtype"] == "error"
    assert wisp.finish() == 0


def test_rewind_files_answers_a_clear_error(duplex):
    # Checkpoints are off (no CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING): the reference's
    # error, as an error response for a real rewind and as `canRewind: false` for a dry run.
    wisp = duplex()
    response = wisp.call("rewind_files", user_message_id="abc")
    assert response["subtype"] == "error"
    assert response["error"] == "File rewinding is not enabled."
    dry = wisp.call("rewind_files", user_message_id="abc", dry_run=True)
    assert dry["response"] == {"canRewind": False, "error": "File rewinding is not enabled."}
    assert wisp.finish() == 0


def test_stop_task_settings_and_rename(duplex):
    wisp = duplex()
    assert wisp.call("stop_task", task_id="t1")["response"] == {}
    assert (
        wisp.call("apply_flag_settings", settings={"permissionMode": "plan"})["subtype"]
        == "success"
    )
    settings = wisp.call("get_settings")["response"]
    assert settings["effective"]["permissionMode"] == "plan"
    renamed = wisp.call("rename_session", title="Renamed")
    # No body, as the reference answers.
    assert renamed == {"subtype": "success", "request_id": renamed["request_id"]}
    assert wisp.finish() == 0


def test_initialize_json_schema_gives_structured_output(duplex, server):
    """TS delivers outputFormat in initialize's jsonSchema; it works as --json-schema."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.script(reply.tool_use("StructuredOutput", {"n": 7}))
    wisp = duplex()
    wisp.initialize(jsonSchema=schema)
    wisp.user("a number please")
    result = wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert result["structured_output"] == {"n": 7}
    assert "StructuredOutput" in wisp.of("system", "init")[0]["tools"]


def test_initialize_with_an_invalid_json_schema_is_an_error_answer(duplex, server):
    wisp = duplex()
    request_id = wisp.request("initialize", jsonSchema={"type": "not-a-type"})
    response = wisp.response_to(request_id)
    assert response["subtype"] == "error"
    assert "Invalid jsonSchema" in response["error"]
    wisp.close_stdin()
    assert wisp.finish() == 0


def test_get_settings_reports_effective_values_sources_and_errors(duplex, server, wisp):
    import json as _json

    user = wisp.home / ".wisp" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(_json.dumps({"permissions": {"allow": ["Read"], "defaultMode": "plan"}}))
    project = wisp.cwd / ".claude" / "settings.json"
    project.parent.mkdir(parents=True, exist_ok=True)
    project.write_text("{ broken")
    proc = duplex()
    proc.initialize()
    response = proc.call("get_settings")
    assert response["subtype"] == "success"
    body = response["response"]
    assert body["effective"]["permissionMode"] == "plan"
    assert "Read" in body["effective"]["permissions"]["allow"]
    assert {"source": "user", "path": str(user)} in body["sources"]
    assert body["errors"][0]["path"] == str(project)
    assert "invalid JSON" in body["errors"][0]["error"]
    proc.close_stdin()
    assert proc.finish() == 0


def test_an_unknown_output_style_is_reported_by_its_configured_name(duplex, server, wisp):
    """As the reference: the settings' choice is what init says, even when no style has
    that name (the default style's instructions then apply)."""
    server.script(reply.text("ok"))
    (wisp.cwd / ".claude").mkdir()
    (wisp.cwd / ".claude" / "settings.json").write_text('{"outputStyle": "Pirate Mode"}')
    proc = duplex()
    assert proc.initialize()["response"]["output_style"] == "Pirate Mode"
    proc.user("hi")
    assert proc.wait_frame("system", "init")["output_style"] == "Pirate Mode"
    assert proc.finish() == 0
    assert "Output style" not in str(server.requests[0].body["system"])
