"""The OpenAI-compatible provider end to end: the real `wisp` against the scripted
server's Chat Completions route over HTTP (the issue's acceptance list)."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Runner
from tests.models.openai.conftest import OA_KEY
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
STREAM = ("--output-format", "stream-json", "--verbose")


def chat_requests(server: ScriptedServer) -> list[JSON]:
    return [r.body for r in server.requests
            if r.path.endswith("/chat/completions") and r.body is not None]


def test_a_plain_answer(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.text("hello from a local model"))
    run = oa_wisp("-p", "hi", "--output-format", "text")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "hello from a local model\n"
    [request] = chat_requests(server)
    assert request["model"] == "gpt-test"  # the spec's prefix is not sent
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][-1] == {"role": "user", "content": "hi"}
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert server.requests[0].headers["authorization"] == f"Bearer {OA_KEY}"


def test_init_reports_the_spec_and_the_result_has_usage(oa_wisp: Runner,
                                                        server: ScriptedServer) -> None:
    server.script(reply.text("ok", usage={"output_tokens": 5}))
    run = oa_wisp("-p", "hi", "--model", "openai:gpt-4.1", *STREAM)
    assert run.of_type("system", "init")[0]["model"] == "openai:gpt-4.1"
    result = run.result
    assert result["usage"]["output_tokens"] == 5
    assert result["usage"]["input_tokens"] > 0
    assert "openai:gpt-4.1" in result["modelUsage"]
    assert result["total_cost_usd"] > 0  # gpt-4.1 has a list price


def test_a_bash_tool_loop(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.tool_use("Bash", {"command": "echo from-bash"}, id="call_abc"),
                  reply.text("done"))
    run = oa_wisp("-p", "run it", "--allowedTools", "Bash", *STREAM)
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "done"
    second = chat_requests(server)[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["id"] == "call_abc"
    assert assistant["tool_calls"][0]["function"]["name"] == "Bash"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "command": "echo from-bash"}
    tool = next(m for m in second if m["role"] == "tool")
    assert tool == {"role": "tool", "tool_call_id": "call_abc", "content": "from-bash"}


def test_two_parallel_tool_calls(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.tool_uses([("Bash", {"command": "echo one"}),
                                   ("Bash", {"command": "echo two"})]),
                  reply.text("both ran"))
    run = oa_wisp("-p", "both", "--allowedTools", "Bash", *STREAM)
    assert run.result["result"] == "both ran"
    second = chat_requests(server)[1]["messages"]
    calls = next(m for m in second if m["role"] == "assistant")["tool_calls"]
    tools = [m for m in second if m["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == [c["id"] for c in calls]
    assert [t["content"] for t in tools] == ["one", "two"]


def test_the_tools_shape(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.text("ok"))
    oa_wisp("-p", "hi")
    tools = chat_requests(server)[0]["tools"]
    bash = next(t for t in tools if t["function"]["name"] == "Bash")
    assert bash["type"] == "function"
    assert bash["function"]["parameters"]["type"] == "object"
    assert "command" in bash["function"]["parameters"]["properties"]
    assert bash["function"]["description"]


def test_a_429_is_retried_with_an_api_retry_frame(oa_wisp: Runner,
                                                  server: ScriptedServer) -> None:
    server.script(reply.error(429, "slow down", retry_after=0.01), reply.text("after the wait"))
    run = oa_wisp("-p", "hi", *STREAM)
    assert run.returncode == 0
    [retry] = run.of_type("system", "api_retry")
    assert retry["error_status"] == 429
    assert run.result["result"] == "after the wait"


def test_a_401_fails_fast(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.error(401, "invalid api key"))
    run = oa_wisp("-p", "hi", *STREAM)
    assert run.returncode == 1
    assert run.result["is_error"] is True
    assert run.result["api_error_status"] == 401
    assert "invalid api key" in run.result["result"]
    assert len(chat_requests(server)) == 1


def test_structured_output(oa_wisp: Runner, server: ScriptedServer) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.script(reply.tool_use("StructuredOutput", {"n": 7}), reply.text("done"))
    run = oa_wisp("-p", "count", "--json-schema", json.dumps(schema), *STREAM)
    assert run.returncode == 0, run.stderr
    assert run.result["structured_output"] == {"n": 7}


def test_partial_messages_keep_the_anthropic_event_order(oa_wisp: Runner,
                                                         server: ScriptedServer) -> None:
    server.script(reply.text("streamed words", chunks=3))
    run = oa_wisp("-p", "hi", "--include-partial-messages", *STREAM)
    events = [f["event"] for f in run.of_type("stream_event")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 1
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == "streamed words"


def test_reasoning_is_shown_as_thinking(oa_wisp: Runner, server: ScriptedServer) -> None:
    server.script(reply.thinking("weighing it up", "the answer"))
    run = oa_wisp("-p", "think", *STREAM)
    blocks = [b for f in run.of_type("assistant") for b in f["message"]["content"]]
    assert blocks[0]["type"] == "thinking" and blocks[0]["thinking"] == "weighing it up"
    assert run.result["result"] == "the answer"


def test_a_named_provider_from_settings_with_its_prices(wisp: Runner,
                                                        server: ScriptedServer) -> None:
    settings = {"providers": {"local": {
        "type": "openai", "base_url": server.openai_url, "api_key_env": "LOCAL_KEY",
        "preset": "llamacpp",
        "models": {"qwen3-coder": {"context_window": 131072, "input_per_mtok": 1000,
                                   "output_per_mtok": 0}}}}}
    server.script(reply.text("local answer"))
    run = wisp("-p", "hi", "--model", "local:qwen3-coder", "--settings", json.dumps(settings),
               *STREAM, env={"LOCAL_KEY": "local-secret"})
    assert run.returncode == 0, run.stderr
    assert server.requests[0].headers["authorization"] == "Bearer local-secret"
    assert chat_requests(server)[0]["model"] == "qwen3-coder"
    model_usage = run.result["modelUsage"]["local:qwen3-coder"]
    assert model_usage["contextWindow"] == 131072
    assert run.result["total_cost_usd"] > 0


def test_duplex_second_prompt_carries_the_first_exchange(oa_wisp: Runner,
                                                         server: ScriptedServer) -> None:
    from tests.duplex.harness import Duplex

    server.script(reply.text("first answer"), reply.text("second answer"))
    proc = Duplex(oa_wisp, "--model", "openai:gpt-test")
    try:
        proc.initialize()
        proc.user("one")
        proc.wait_frame("result")
        proc.user("two")
        proc.wait_for(lambda frames: len([f for f in frames if f.get("type") == "result"]) >= 2)
    finally:
        proc.kill()
    second = chat_requests(server)[1]["messages"]
    assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
    assert second[2]["content"] == "first answer"


def test_a_bad_preset_in_settings_is_a_clear_error(wisp: Runner) -> None:
    settings = {"providers": {"local": {"base_url": "http://127.0.0.1:1/v1",
                                        "preset": "nosuch"}}}
    run = wisp("-p", "hi", "--model", "local:x", "--settings", json.dumps(settings))
    assert run.returncode == 1
    assert "unknown preset 'nosuch'" in run.stderr + run.stdout


def test_the_official_python_sdk_drives_wisp_on_an_openai_model(
        server: ScriptedServer, tmp_path: Any) -> None:
    import asyncio

    import pytest

    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.sdk.conftest import sdk_env, wisp_executable

    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = {**sdk_env(server, home), "OPENAI_BASE_URL": server.openai_url,
           "OPENAI_API_KEY": OA_KEY}
    server.script(reply.tool_use("Bash", {"command": "echo sdk-ran"}), reply.text("sdk done"))
    options = sdk.ClaudeAgentOptions(cli_path=wisp_executable(tmp_path), cwd=str(work),
                                     env=env, model="openai:gpt-test",
                                     allowed_tools=["Bash"])

    async def collect() -> list[Any]:
        return [m async for m in sdk.query(prompt="go", options=options)]

    messages = asyncio.run(asyncio.wait_for(collect(), 60))
    result = messages[-1]
    assert isinstance(result, sdk.ResultMessage) and not result.is_error
    assert result.result == "sdk done"
    init = next(m for m in messages if isinstance(m, sdk.SystemMessage))
    assert init.data["model"] == "openai:gpt-test"
    tool = next(m for m in chat_requests(server)[1]["messages"] if m["role"] == "tool")
    assert tool["content"] == "sdk-ran"


def test_record_an_openai_tool_loop_and_replay_it_with_no_server(
        server: ScriptedServer, tmp_path: Any) -> None:
    from tests.conftest import Runner

    cassette = tmp_path / "oa.jsonl"
    server.script(reply.tool_use("Bash", {"command": "echo hi > out.txt"}),
                  reply.text("Wrote it."))
    (tmp_path / "rec").mkdir()
    recorder = Runner(server, tmp_path / "rec")
    oa = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": OA_KEY}
    args = ("-p", "write hi", "--model", "openai:gpt-test", "--allowedTools", "Bash", *STREAM)
    first = recorder(*args, env={**oa, "WISP_RECORD": str(cassette)})
    assert first.result["result"] == "Wrote it."
    assert OA_KEY not in cassette.read_text()
    server.close()

    (tmp_path / "rep").mkdir()
    replayer = Runner(server, tmp_path / "rep")
    again = replayer(*args, env={**oa, "WISP_REPLAY": str(cassette),
                                 "WISP_REPLAY_MATCH": "loose"})
    assert again.returncode == 0, again.stderr
    assert again.result["result"] == "Wrote it."
    assert (replayer.cwd / "out.txt").read_text() == "hi\n"  # the tool ran again
