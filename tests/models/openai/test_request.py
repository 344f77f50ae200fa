"""Chat Completions bodies from Anthropic-shaped requests, per preset (quirks §1F)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from wisp.models.base import ModelRequest
from wisp.models.openai.presets import PRESETS, compat_for
from wisp.models.openai.request import IMAGE_STUB, chat_body
from wisp.models.openai.schema import tool_parameters

JSON = dict[str, Any]
TOOL = {"name": "Read", "description": "read a file",
        "input_schema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                         "properties": {"file_path": {"$ref": "#/$defs/path"}},
                         "required": ["file_path"], "$defs": {"path": {"type": "string"}}}}
HISTORY: list[JSON] = [
    {"role": "user", "content": "read x"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "I should read", "signature": ""},
        {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "x"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "hello", "is_error": False},
        {"type": "text", "text": "and now?"}]},
]


def body(preset: str = "generic", history: list[JSON] | None = None, **overrides: Any) -> JSON:
    request = ModelRequest(model="qwen", messages=history or HISTORY, max_tokens=1000,
                           system=[{"type": "text", "text": "be brief"}], tools=[TOOL])
    compat = compat_for(preset, overrides or None, "test")
    return chat_body(request, compat, {})


def test_the_shape_of_a_tool_turn() -> None:
    b = body()
    assert [m["role"] for m in b["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assistant = b["messages"][2]
    assert assistant["content"] is None
    assert assistant["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "Read", "arguments": '{"file_path": "x"}'}}]
    assert b["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "hello"}
    assert b["stream"] is True and b["stream_options"] == {"include_usage": True}
    assert b["tools"][0] == {"type": "function", "function": {
        "name": "Read", "description": "read a file", "parameters": {
            "type": "object", "properties": {"file_path": {"type": "string"}},
            "required": ["file_path"]}}}
    assert "parallel_tool_calls" not in b and "tool_choice" not in b


def test_only_allowed_top_level_fields_are_sent() -> None:
    assert set(body()) == {"model", "messages", "stream", "stream_options", "max_tokens",
                           "tools"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_makes_a_valid_body(preset: str) -> None:
    b = body(preset)
    roles = [m["role"] for m in b["messages"]]
    assert roles.count("system") <= 1
    for first, second in itertools.pairwise(roles):
        assert not (first == second == "user")
    ids = [c["id"] for m in b["messages"] for c in m.get("tool_calls", [])]
    assert [m["tool_call_id"] for m in b["messages"] if m["role"] == "tool"] == ids


def test_openai_uses_max_completion_tokens() -> None:
    b = body("openai")
    assert b["max_completion_tokens"] == 1000 and "max_tokens" not in b


def test_deepseek_echoes_reasoning_on_tool_turns_and_groq_never_sends_it() -> None:
    assert body("deepseek")["messages"][2]["reasoning_content"] == "I should read"
    assert "reasoning_content" not in body("groq", reasoning_echo="all")["messages"][2]
    assert "reasoning_content" not in body("generic")["messages"][2]


def test_system_role_none_folds_the_system_prompt_into_the_first_user_message() -> None:
    b = body(system_role="none")
    assert b["messages"][0] == {"role": "user", "content": "be brief\n\nread x"}


def test_developer_role() -> None:
    assert body(system_role="developer")["messages"][0]["role"] == "developer"


def test_consecutive_user_turns_are_merged() -> None:
    b = body(history=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert b["messages"][1:] == [{"role": "user", "content": "a\n\nb"}]


def test_insert_assistant_between_tool_and_user() -> None:
    roles = [m["role"] for m in body(tool_then_user="insert_assistant")["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]


def test_tool_message_name_and_empty_content_styles() -> None:
    b = body(tool_message_name=True, empty_assistant_content="empty_string")
    assert b["messages"][3]["name"] == "Read"
    assert b["messages"][2]["content"] == ""
    assert "content" not in body(empty_assistant_content="omit")["messages"][2]


def test_images_for_vision_models_and_a_stub_otherwise() -> None:
    history = [{"role": "user", "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]}]
    with_vision = body(history=history)["messages"][1]["content"]
    assert with_vision[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    without = body("deepseek", history=history)["messages"][1]["content"]
    assert without == f"see\n\n{IMAGE_STUB}"
    assert history[0]["content"][1]["type"] == "image"  # the stored history is untouched


def test_alnum9_ids_are_nine_alphanumerics_and_still_paired() -> None:
    b = body(tool_id_style="alnum9")
    wire = b["messages"][2]["tool_calls"][0]["id"]
    assert len(wire) == 9 and wire.isalnum()
    assert b["messages"][3]["tool_call_id"] == wire


def test_errors_are_prefixed_and_lone_surrogates_replaced() -> None:
    history = [*HISTORY[:2], {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "bad \ud800",
         "is_error": True}]}]
    tool_message = body(history=history)["messages"][3]
    assert tool_message["content"] == "Error: bad \ufffd"


def test_schema_modes() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]},
                                               "n": {"type": "integer", "exclusiveMinimum": 0}},
              "required": ["n"]}
    gemini = tool_parameters(schema, "gemini")
    assert gemini["properties"]["a"] == {"type": "string", "nullable": True}
    assert gemini["properties"]["n"] == {"type": "integer", "minimum": 0}
    strict = tool_parameters(schema, "openai_strict")
    assert strict["additionalProperties"] is False and strict["required"] == ["a", "n"]
    recursive = {"type": "object", "properties": {"node": {"$ref": "#/$defs/n"}},
                 "$defs": {"n": {"type": "object", "properties": {"child": {"$ref": "#/$defs/n"}}}}}
    inlined = tool_parameters(recursive, "portable")
    assert inlined["properties"]["node"]["properties"]["child"] == {}
    assert tool_parameters({"type": "string"}, "portable")["type"] == "object"


def test_unknown_compat_keys_and_values_fail_loudly() -> None:
    from wisp.errors import UsageError

    with pytest.raises(UsageError, match="unknown compat key"):
        compat_for("generic", {"no_such": 1}, "settings providers.x")
    with pytest.raises(UsageError, match="max_tokens_field"):
        compat_for("generic", {"max_tokens_field": "tokens"}, "settings providers.x")
    with pytest.raises(UsageError, match="unknown preset"):
        compat_for("nope", None, "settings providers.x")


def test_model_entry_sampling_and_reasoning_switches() -> None:
    switch = {"on": {"chat_template_kwargs": {"enable_thinking": True}},
              "off": {"chat_template_kwargs": {"enable_thinking": False}}}
    entry = {"api_id": "Qwen/Qwen3", "temperature": 0.7, "top_p": False,
             "extra_body": {"top_k": 20}, "reasoning": {"request": switch}}
    request = ModelRequest(model="qwen", messages=[{"role": "user", "content": "hi"}],
                           max_tokens=10, thinking={"type": "enabled", "budget_tokens": 100})
    b = chat_body(request, PRESETS["vllm"], entry)
    assert b["model"] == "Qwen/Qwen3" and b["temperature"] == 0.7 and "top_p" not in b
    assert b["top_k"] == 20
    assert b["chat_template_kwargs"] == {"enable_thinking": True}
    off = chat_body(ModelRequest(model="qwen", messages=request.messages, max_tokens=10),
                    PRESETS["vllm"], entry)
    assert off["chat_template_kwargs"] == {"enable_thinking": False}
    assert "temperature" not in chat_body(request, PRESETS["vllm"], {})
