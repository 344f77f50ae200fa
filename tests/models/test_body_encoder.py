"""`BodyEncoder` sends exactly the bytes `json.dumps` would, while encoding each history
message once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wisp.models import body as body_module
from wisp.models.base import ModelRequest
from wisp.models.body import BodyEncoder, encode_body

JSON = dict[str, Any]


def plain(body: JSON) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def request(history: list[JSON], **extra: Any) -> JSON:
    return ModelRequest(model="m", messages=list(history), max_tokens=10,
                        system=[{"type": "text", "text": "sys é"}],
                        tools=[{"name": "T", "input_schema": {"type": "object"}}],
                        **extra).body()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every value encode_value() is asked to encode."""
    seen: list[object] = []
    real = body_module.encode_value

    def spy(value: object) -> bytes:
        seen.append(value)
        return real(value)

    monkeypatch.setattr(body_module, "encode_value", spy)
    return seen


def test_a_growing_history_matches_json_dumps_and_encodes_each_message_once(
        counted: list[object]) -> None:
    encoder = BodyEncoder()
    history: list[JSON] = []
    for i in range(30):
        history.append({"role": "user", "content": f"turn {i} ✓"})
        assert encoder.encode(request(history)) == plain(request(history))
        history.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    messages = [v for v in counted if isinstance(v, dict) and "role" in v]
    assert len(messages) == len(history) - 1  # the last reply was never sent


def test_a_message_replaced_at_the_end_is_encoded_again() -> None:
    encoder = BodyEncoder()
    history: list[JSON] = [{"role": "user", "content": "a"},
                           {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
                           {"role": "user", "content": "c"}]
    encoder.encode(request(history))
    # append_user merges into the last user message by replacing it with a new dict.
    history[-1] = {"role": "user", "content": [{"type": "text", "text": "c"},
                                               {"type": "text", "text": "d"}]}
    assert encoder.encode(request(history)) == plain(request(history))
    # A shorter or different history (compaction, a retry without the prefill) is fine too.
    assert encoder.encode(request(history[:1])) == plain(request(history[:1]))
    fresh = [{"role": "user", "content": "summary"}, *history[1:]]
    assert encoder.encode(request(fresh)) == plain(request(fresh))
    assert encoder.encode(request([])) == plain(request([]))


def test_interleaved_histories_each_keep_their_cache(counted: list[object]) -> None:
    """A subagent's requests interleave with the session's: neither re-encodes the other."""
    encoder = BodyEncoder()
    main: list[JSON] = []
    sub: list[JSON] = []
    for i in range(5):
        main.append({"role": "user", "content": f"main {i}"})
        sub.append({"role": "user", "content": f"sub {i}"})
        assert encoder.encode(request(main)) == plain(request(main))
        assert encoder.encode(request(sub, thinking={"type": "enabled"})) == plain(
            request(sub, thinking={"type": "enabled"}))
    messages = [v for v in counted if isinstance(v, dict) and "role" in v]
    assert len(messages) == 10


def test_lone_surrogates_are_escaped() -> None:
    history: list[JSON] = [{"role": "user", "content": "bad \udcff"},
                           {"role": "assistant", "content": "é"}]
    encoded = BodyEncoder().encode(request(history))
    assert json.loads(encoded) == request(history)
    assert b"\\udcff" in encoded
    assert encode_body({"a": "x\udcff"}) == b'{"a":"x\\udcff"}'


def test_system_blocks_and_tool_definitions_are_encoded_once(counted: list[object]) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    system = [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}]
    encoder = BodyEncoder()
    for turn in range(3):
        # A fresh definition dict each turn, as Tool.api_definition() builds them.
        tools = [{"name": "Echo", "description": "echoes", "input_schema": schema}]
        body = ModelRequest(model="m", messages=[{"role": "user", "content": str(turn)}],
                            max_tokens=10, system=system, tools=tools).body()
        assert encoder.encode(body) == plain(body)
    assert sum(1 for v in counted if v is system[0]) == 1
    assert sum(1 for v in counted if isinstance(v, dict) and v.get("name") == "Echo") == 1


def test_a_changed_tool_description_or_schema_is_encoded_again() -> None:
    encoder = BodyEncoder()
    schema = {"type": "object"}
    for description, input_schema in [("a", schema), ("b", schema), ("b", {"type": "object",
                                                                          "required": ["q"]})]:
        tools = [{"name": "T", "description": description, "input_schema": input_schema}]
        body = ModelRequest(model="m", messages=[], max_tokens=1, tools=tools).body()
        assert encoder.encode(body) == plain(body)


def test_a_first_message_rebuilt_equal_each_turn_keeps_the_cache(counted: list[object]) -> None:
    """with_context puts the CLAUDE.md blocks in front of the first user message as a new
    dict on every request: the history after it must not be encoded again each turn."""
    from wisp.engine.next_request import with_context

    blocks = [{"type": "text", "text": "# CLAUDE.md\nbe brief"}]
    encoder = BodyEncoder()
    history: list[JSON] = []
    for i in range(20):
        history.append({"role": "user", "content": f"turn {i}"})
        messages = with_context(history, blocks)
        assert encoder.encode(request(messages)) == plain(request(messages))
        history.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    encoded = [v for v in counted if isinstance(v, dict) and "role" in v]
    assert len(encoded) == len(history) - 1  # each message once, the last reply never sent


def test_an_equal_history_in_new_objects_is_sent_as_the_same_bytes() -> None:
    """Messages are matched by value: a history rebuilt from the same JSON (a resumed
    session, say) gives the bytes json.dumps gives, whichever objects hold it."""
    encoder = BodyEncoder()
    history: list[JSON] = [{"role": "user", "content": "a"},
                           {"role": "assistant", "content": [{"type": "text", "text": "b"}]}]
    encoder.encode(request(history))
    copied = [*json.loads(json.dumps(history)), {"role": "user", "content": "c"}]
    assert encoder.encode(request(copied)) == plain(request(copied))
    changed = [{"role": "user", "content": "A"}, *copied[1:]]
    assert encoder.encode(request(changed)) == plain(request(changed))
