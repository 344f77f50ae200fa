from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from wisp.errors import ModelAPIError
from wisp.models.accumulate import accumulate, fold

JSON = dict[str, Any]


def start(**usage: int) -> JSON:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1, **usage},
        },
    }


def block_start(index: int, block: JSON) -> JSON:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> JSON:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> JSON:
    return {"type": "content_block_stop", "index": index}


def end(stop_reason: str = "end_turn", **usage: Any) -> list[JSON]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 42, **usage},
        },
        {"type": "message_stop"},
    ]


def tool_events(partials: list[str]) -> list[JSON]:
    return [
        start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
        *(delta(0, type="input_json_delta", partial_json=p) for p in partials),
        stop(0),
        *end("tool_use"),
    ]


def test_text_and_usage() -> None:
    events = [
        start(cache_read_input_tokens=3),
        {"type": "ping"},
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Hel"),
        delta(0, type="text_delta", text="lo"),
        stop(0),
        *end(input_tokens=None, cache_creation_input_tokens=5),
    ]
    message = fold(events)
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"] == {
        "input_tokens": 10,  # a None in message_delta does not erase a known count
        "output_tokens": 42,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 5,
    }


def test_tool_input_is_parsed_at_block_stop() -> None:
    raw = json.dumps({"command": "echo ✓", "n": [1, 2]})
    message = fold(tool_events([raw[:3], "", raw[3:10], raw[10:]]))
    assert message["content"] == [
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "Bash",
            "input": {"command": "echo ✓", "n": [1, 2]},
        }
    ]


def test_partial_json_is_visible_while_streaming() -> None:
    snapshot = None
    for event in tool_events(['{"a"', ": 1}"])[:3]:
        snapshot = accumulate(snapshot, event)
    assert snapshot is not None
    assert snapshot["content"][0]["partial_json"] == '{"a"'


@pytest.mark.parametrize("partials", [[], [""], ["  "]])
def test_empty_tool_input_is_an_empty_object(partials: list[str]) -> None:
    assert fold(tool_events(partials))["content"][0]["input"] == {}


@pytest.mark.parametrize(
    ("partials", "marker"),
    [(['{"a": '], "Invalid JSON in tool input"), (["[1]"], "not a JSON object")],
)
def test_bad_tool_input_is_marked_not_raised(partials: list[str], marker: str) -> None:
    block = fold(tool_events(partials))["content"][0]
    assert block["input"] == {}
    assert marker in block["input_error"]
    assert block["partial_json"] == "".join(partials)


def test_thinking_signature_and_citations() -> None:
    citation = {"type": "char_location", "cited_text": "x"}
    events = [
        start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="hm"),
        delta(0, type="thinking_delta", thinking="m"),
        delta(0, type="signature_delta", signature="sig"),
        stop(0),
        block_start(1, {"type": "text", "text": "", "citations": []}),
        delta(1, type="text_delta", text="cited"),
        delta(1, type="citations_delta", citation=citation),
        delta(1, type="some_future_delta", whatever=1),
        stop(1),
        *end(),
    ]
    pristine = copy.deepcopy(events)
    message = fold(events)
    assert message["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "cited", "citations": [citation]},
    ]
    assert events == pristine  # the events themselves were not mutated


def test_the_snapshot_is_a_working_copy_that_later_events_mutate() -> None:
    events = [
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="a"),
    ]
    first = accumulate(None, events[0])
    assert accumulate(first, events[1]) is first
    assert accumulate(first, events[2])["content"][0]["text"] == "a"
    assert events[0]["message"]["content"] == []


def test_message_delta_passes_new_keys_through() -> None:
    events = [
        start(),
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "pause_turn",
                "stop_sequence": None,
                "container": {"id": "c1"},
            },
            "usage": {"output_tokens": 7},
        },
    ]
    message = fold(events)
    assert (message["stop_reason"], message["container"]) == ("pause_turn", {"id": "c1"})
    assert message["usage"]["output_tokens"] == 7


@pytest.mark.parametrize(
    "events",
    [
        [],
        [{"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}],
        [start(), delta(3, type="text_delta", text="x")],
        [start(), {"type": "content_block_start", "index": 0}],
        [{"type": "message_start"}],
    ],
)
def test_malformed_streams_raise_model_errors(events: list[JSON]) -> None:
    with pytest.raises(ModelAPIError, match="Malformed stream"):
        fold(events)
