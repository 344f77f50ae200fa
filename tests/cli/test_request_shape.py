"""What wisp sends to the Messages API for each relevant flag."""

from __future__ import annotations

from wisp.testing import reply


def test_default_request(wisp, server):
    server.script(reply.text("ok"))
    assert wisp("-p", "hello").returncode == 0
    request = server.requests[0]
    assert request.path.startswith("/v1/messages")
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.body
    assert body["stream"] is True
    assert body["model"] == "claude-opus-5-5"
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    names = {t["name"] for t in body["tools"]}
    assert {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "WebFetch"} <= names
    system_text = body["system"][0]["text"]
    assert "wisp" in system_text and str(wisp.cwd) in system_text


def test_model_aliases_and_env(wisp, server):
    server.script(reply.text("a"), reply.text("b"), reply.text("c"))
    wisp("-p", "x", "--model", "sonnet")
    wisp("-p", "x", "--model=haiku", env={"ANTHROPIC_DEFAULT_HAIKU_MODEL": "my-haiku"})
    wisp("-p", "x", env={"ANTHROPIC_MODEL": "claude-custom-1"})
    models = [r.body["model"] for r in server.requests]
    assert models == ["claude-sonnet-5-5", "my-haiku", "claude-custom-1"]


def test_auth_token_is_sent_as_bearer(wisp, server):
    server.script(reply.text("ok"))
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "tok-1"}
    assert wisp("-p", "x", env=env).returncode == 0
    assert server.requests[0].headers["authorization"] == "Bearer tok-1"


def test_empty_system_prompt_and_no_tools(wisp, server):
    server.script(reply.text("ok"))
    assert wisp("-p", "x", "--system-prompt", "", "--tools", "").returncode == 0
    body = server.requests[0].body
    assert not body.get("system")
    assert not body.get("tools")


def test_custom_and_appended_system_prompt(wisp, server, tmp_path):
    server.script(reply.text("ok"), reply.text("ok"))
    wisp("-p", "x", "--system-prompt", "You are X.", "--append-system-prompt", "Be brief.")
    prompt_file = tmp_path / "sys.txt"
    prompt_file.write_text("From a file.")
    wisp("-p", "x", "--system-prompt-file", str(prompt_file))
    first, second = (r.body["system"][0]["text"] for r in server.requests)
    assert first == "You are X.\n\nBe brief."
    assert second == "From a file."


def test_tools_flag_selects_builtins(wisp, server):
    server.script(reply.text("ok"))
    wisp("-p", "x", "--tools", "Bash,Read")
    assert sorted(t["name"] for t in server.requests[0].body["tools"]) == ["Bash", "Read"]


def test_disallowed_tool_is_removed_and_reported_when_called(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose",
               "--disallowedTools", "Bash")
    assert run.returncode == 0
    assert "Bash" not in {t["name"] for t in server.requests[0].body["tools"]}
    tool_result = run.of_type("user")[0]["message"]["content"][0]
    assert tool_result["is_error"] is True
    assert "No such tool available: Bash" in tool_result["content"]
