"""The normaliser: any server's Chat Completions chunks → Anthropic events that fold into
the message the engine expects (quirks of openai-compat-quirks.md §1A–1E)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from wisp.errors import RetryableAPIError, StreamCutError
from wisp.models.accumulate import fold
from wisp.models.openai.normalise import Normaliser, ThinkSplitter, completion_as_chunk
from wisp.models.openai.presets import PRESETS, Compat

JSON = dict[str, Any]


def chunk(delta: JSON | None = None, finish: str | None = None, usage: JSON | None = None,
          choices: bool = True) -> JSON:
    out: JSON = {"id": "chatcmpl-1", "object": "chat.completion.chunk"}
    if choices:
        out["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    else:
        out["choices"] = []
    if usage is not None:
        out["usage"] = usage
    return out


def run(chunks: list[JSON], done: bool = True, compat: Compat | None = None,
        used: set[str] | None = None) -> JSON:
    norm = Normaliser(compat or PRESETS["generic"], "m", used if used is not None else set())
    events = [e for c in chunks for e in norm.feed(c)] + norm.finish(done)
    return fold(events)


def tool(index: int | None = None, id: str | None = None, name: str | None = None,
         args: Any = None) -> JSON:
    call: JSON = {"type": "function", "function": {}}
    if index is not None:
        call["index"] = index
    if id is not None:
        call["id"] = id
    if name is not None:
        call["function"]["name"] = name
    if args is not None:
        call["function"]["arguments"] = args
    return call


def tool_uses(message: JSON) -> list[tuple[str, JSON]]:
    out = []
    for block in message["content"]:
        if block["type"] == "tool_use":
            out.append((block["name"], block["input"]))
    return out


def test_text_streams_into_one_text_block() -> None:
    message = run([chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}),
                   chunk({"content": "lo"}), chunk(finish="stop")])
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stop_reason"] == "end_turn"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_details"])
def test_every_reasoning_field_becomes_the_same_thinking_block(field: str) -> None:
    def part(text: str) -> JSON:
        if field == "reasoning_details":
            return {field: [{"type": "reasoning.text", "text": text}]}
        return {field: text}

    message = run([chunk(part("let me ")), chunk(part("think")), chunk({"content": "ok"}),
                   chunk(finish="stop")])
    assert message["content"][0]["type"] == "thinking"
    assert message["content"][0]["thinking"] == "let me think"
    assert message["content"][1] == {"type": "text", "text": "ok"}


@pytest.mark.parametrize("seed", range(60))
def test_think_tags_split_anywhere_give_the_same_blocks(seed: int) -> None:
    text = "<think>plan it\nstep</think>\n\nThe answer is <b>42</b>."
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, len(text) - 2)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    message = run([chunk({"content": p}) for p in pieces] + [chunk(finish="stop")])
    assert [b["type"] for b in message["content"]] == ["thinking", "text"]
    assert message["content"][0]["thinking"] == "plan it\nstep"
    assert message["content"][1]["text"] == "The answer is <b>42</b>."


def test_only_a_closing_tag_is_dropped_and_implicit_open_reads_reasoning() -> None:
    plain = run([chunk({"content": "thought</think>answer"}), chunk(finish="stop")])
    assert plain["content"] == [{"type": "text", "text": "thoughtanswer"}]
    implicit = run([chunk({"content": "thought</think>answer"}), chunk(finish="stop")],
                   compat=PRESETS["generic"].with_overrides({"think_implicit_open": True}, "t"))
    assert [b["type"] for b in implicit["content"]] == ["thinking", "text"]


def test_text_without_tags_passes_through_even_with_angle_brackets() -> None:
    message = run([chunk({"content": "a <thin"}), chunk({"content": "g> b <"}),
                   chunk(finish="stop")])
    assert message["content"] == [{"type": "text", "text": "a <thing> b <"}]


def test_tool_call_fragments_and_one_chunk_give_the_same_tool_use() -> None:
    whole = run([chunk({"tool_calls": [tool(0, "call_a", "Read", '{"file_path": "x"}')]}),
                 chunk(finish="tool_calls")])
    parts = '{"file_path": "x"}'
    fragments = [chunk({"tool_calls": [tool(0, "call_a", "Read", "")]})] + [
        chunk({"tool_calls": [tool(0, args=c)]}) for c in parts] + [chunk(finish="tool_calls")]
    assert tool_uses(whole) == tool_uses(run(fragments)) == [("Read", {"file_path": "x"})]
    assert whole["stop_reason"] == "tool_use"


def test_arguments_as_an_object_are_used_as_they_are() -> None:
    message = run([chunk({"tool_calls": [tool(0, "c1", "Read", {"path": "a"})]}),
                   chunk(finish="tool_calls")])
    assert tool_uses(message) == [("Read", {"path": "a"})]


def test_missing_index_with_ids_keeps_parallel_calls_apart() -> None:
    message = run([
        chunk({"tool_calls": [tool(None, "c1", "Read", '{"a"')]}),
        chunk({"tool_calls": [tool(None, "c2", "Grep", '{"b"')]}),
        chunk({"tool_calls": [tool(None, "c1", None, ': 1}')]}),
        chunk({"tool_calls": [tool(None, "c2", None, ': 2}')]}),
        chunk(finish="tool_calls")])
    assert tool_uses(message) == [("Read", {"a": 1}), ("Grep", {"b": 2})]


def test_a_constant_index_with_new_ids_opens_new_calls() -> None:
    message = run([chunk({"tool_calls": [tool(0, "c1", "Read", '{"a": 1}')]}),
                   chunk({"tool_calls": [tool(0, "c2", "Grep", '{"b": 2}')]}),
                   chunk(finish="tool_calls")])
    assert tool_uses(message) == [("Read", {"a": 1}), ("Grep", {"b": 2})]


def test_an_index_starting_at_one_is_fine() -> None:
    message = run([chunk({"tool_calls": [tool(1, "c1", "Read", '{"a": 1}')]}),
                   chunk(finish="tool_calls")])
    assert tool_uses(message) == [("Read", {"a": 1})]


def test_missing_or_empty_ids_get_fresh_unique_ones() -> None:
    message = run([chunk({"tool_calls": [tool(0, "", "Read", "{}")]}),
                   chunk({"tool_calls": [tool(1, None, "Grep", "{}")]}),
                   chunk(finish="tool_calls")])
    ids = [b["id"] for b in message["content"]]
    assert all(ids) and len(set(ids)) == 2


def test_an_id_reused_across_turns_is_replaced() -> None:
    used: set[str] = set()
    first = run([chunk({"tool_calls": [tool(0, "read:0", "Read", "{}")]}),
                 chunk(finish="tool_calls")], used=used)
    second = run([chunk({"tool_calls": [tool(0, "read:0", "Read", "{}")]}),
                  chunk(finish="tool_calls")], used=used)
    assert first["content"][0]["id"] == "read:0"
    assert second["content"][0]["id"] != "read:0"


def test_a_name_after_the_arguments_and_empty_names_in_between() -> None:
    message = run([chunk({"tool_calls": [tool(0, "c1", "", '{"a":')]}),
                   chunk({"tool_calls": [tool(0, None, "", " 1}")]}),
                   chunk({"tool_calls": [tool(0, None, "Read", "")]}),
                   chunk(finish="tool_calls")])
    assert tool_uses(message) == [("Read", {"a": 1})]


@pytest.mark.parametrize("args", ["", None])
def test_no_arguments_means_an_empty_object(args: str | None) -> None:
    message = run([chunk({"tool_calls": [tool(0, "c1", "TodoRead", args)]}),
                   chunk(finish="tool_calls")])
    assert tool_uses(message) == [("TodoRead", {})]


@pytest.mark.parametrize("args", ['{"a":1', '{"a":1}{"b":2}'])
def test_malformed_arguments_do_not_become_an_input(args: str) -> None:
    norm = Normaliser(PRESETS["generic"], "m", set())
    events = [*norm.feed(chunk({"tool_calls": [tool(0, "c1", "Read", args)]})),
              *norm.finish(True)]
    deltas = [e["delta"]["partial_json"] for e in events
              if e.get("type") == "content_block_delta"]
    assert deltas == [args]  # the fold keeps the raw text; the engine refuses to run it


@pytest.mark.parametrize("finish", ["stop", "tool_call", "eos", "end_turn", "function_call",
                                    None])
def test_any_finish_value_with_a_tool_call_means_tool_use(finish: str | None) -> None:
    message = run([chunk({"tool_calls": [tool(0, "c1", "Read", "{}")]}), chunk(finish=finish)])
    assert message["stop_reason"] == "tool_use"


@pytest.mark.parametrize(("finish", "stop"), [("length", "max_tokens"), ("stop", "end_turn"),
                                              ("content_filter", "refusal"),
                                              ("eos", "end_turn"), (None, "end_turn")])
def test_finish_values_without_tools(finish: str | None, stop: str) -> None:
    assert run([chunk({"content": "x"}), chunk(finish=finish)])["stop_reason"] == stop


def test_usage_after_the_finish_chunk_is_read_and_cached_tokens_split_out() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
             "prompt_tokens_details": {"cached_tokens": 40}}
    message = run([chunk({"content": "x"}), chunk(finish="stop"),
                   chunk(usage=usage, choices=False)])
    assert message["usage"]["input_tokens"] == 60
    assert message["usage"]["cache_read_input_tokens"] == 40
    assert message["usage"]["output_tokens"] == 7


def test_cumulative_usage_with_nulls_in_between_is_not_summed() -> None:
    chunks = []
    for n in range(1, 6):
        chunks.append(chunk({"content": "x"}, usage={"prompt_tokens": 10,
                                                     "completion_tokens": n}))
        chunks.append({**chunk({"content": ""}), "usage": None})
    message = run([*chunks, chunk(finish="stop")])
    assert message["usage"]["output_tokens"] == 5
    assert message["usage"]["input_tokens"] == 10


def test_no_usage_at_all_is_estimated() -> None:
    message = run([chunk({"content": "x" * 400}), chunk(finish="stop")])
    assert message["usage"]["output_tokens"] == 100


def test_a_stream_cut_without_done_or_finish_fails_and_runs_nothing() -> None:
    norm = Normaliser(PRESETS["generic"], "m", set())
    norm.feed(chunk({"tool_calls": [tool(0, "c1", "Bash", '{"command": "rm')]}))
    with pytest.raises(StreamCutError):
        norm.finish(done=False)


def test_eof_after_a_finish_reason_is_a_clean_end() -> None:
    assert run([chunk({"content": "x"}), chunk(finish="stop")], done=False)["content"][0][
        "text"] == "x"


def test_reasoning_only_is_retried_not_ended_silently() -> None:
    norm = Normaliser(PRESETS["generic"], "m", set())
    norm.feed(chunk({"reasoning_content": "hmm"}))
    norm.feed(chunk(finish="stop"))
    with pytest.raises(RetryableAPIError):
        norm.finish(True)


def test_reasoning_only_that_hit_the_limit_is_max_tokens() -> None:
    message = run([chunk({"reasoning_content": "hmm"}), chunk(finish="length")])
    assert message["stop_reason"] == "max_tokens"


def test_a_whole_completion_becomes_one_chunk() -> None:
    body = {"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "Read", "arguments": json.dumps({"p": 1})}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    message = run([completion_as_chunk(body)])
    assert tool_uses(message) == [("Read", {"p": 1})]
    assert message["usage"]["output_tokens"] == 2


def test_splitter_holds_a_partial_tag_until_it_is_known() -> None:
    splitter = ThinkSplitter(False)
    assert splitter.feed("abc<thi") == [("text", "abc")]
    assert splitter.feed("nk>x") == [("thinking", "x")]


FALLBACK = PRESETS["generic"].with_overrides(
    {"text_tool_call_fallback": ["hermes_xml", "qwen_xml", "json"]}, "test")


def test_hermes_tool_calls_in_text_are_read_when_the_fallback_is_on() -> None:
    text = 'Let me look.\n<tool_call>{"name": "Read", "arguments": {"file_path": "a"}}</tool_call>'
    message = run([chunk({"content": text[:20]}), chunk({"content": text[20:]}),
                   chunk(finish="stop")], compat=FALLBACK)
    assert tool_uses(message) == [("Read", {"file_path": "a"})]
    assert message["content"][0] == {"type": "text", "text": "Let me look."}
    assert message["stop_reason"] == "tool_use"


def test_qwen_xml_tool_calls_in_text() -> None:
    text = "<function=Bash><parameter=command>ls -la</parameter></function>"
    assert tool_uses(run([chunk({"content": text}), chunk(finish="stop")],
                         compat=FALLBACK)) == [("Bash", {"command": "ls -la"})]


def test_with_the_fallback_off_a_text_call_stays_text() -> None:
    text = '<tool_call>{"name": "Read", "arguments": {}}</tool_call>'
    message = run([chunk({"content": text}), chunk(finish="stop")])
    assert tool_uses(message) == []
    assert message["content"][0]["text"] == text
