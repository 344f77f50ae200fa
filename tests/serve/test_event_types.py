"""The event types (`shapes.ServerEvent`, `shapes.ClientEvent`, `shapes.ClientEventRecord`)
against what the builders and validators produce, and against the official SDK's types.

A TypedDict is only a promise to mypy: these tests hold the JSON to it. Every builder's
output has exactly the keys its type declares (required ones present, nothing
undeclared), nested objects and literal values included; every event type the SDK
defines a client may send has a type here, is accepted by the validator and, malformed,
is refused naming the field."""

from __future__ import annotations

import types as pytypes
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

anthropic = pytest.importorskip("anthropic")

from anthropic.types.beta.sessions import (  # noqa: E402
    BetaManagedAgentsSessionEvent,
)
from anthropic.types.beta.sessions.beta_managed_agents_event_params import (  # noqa: E402
    BetaManagedAgentsEventParams,
)

from wisp.serve import shapes  # noqa: E402
from wisp.serve.session_log import public  # noqa: E402
from wisp.serve.shapes import (  # noqa: E402
    ShapeError,
    multiagent,
    outcomes,
)
from wisp.serve.shapes import event_types as et  # noqa: E402
from wisp.serve.shapes.client_events import CLIENT_EVENTS  # noqa: E402

JSON = dict[str, Any]


# A small structural check of a value against a type annotation -----------------------------

def _is_typeddict(kind: Any) -> bool:
    return isinstance(kind, type) and typing.is_typeddict(kind)


def _tag(kind: Any) -> Any:
    """The `type` literal(s) of a TypedDict, as a tuple."""
    return get_args(get_type_hints(kind)["type"])


def _members(union: Any) -> tuple[Any, ...]:
    return get_args(union) if get_origin(union) in (typing.Union, pytypes.UnionType) else (
        union,)


def _by_tag(union: Any, value: JSON) -> Any:
    """The member of a union of TypedDicts whose `type` literal the value carries."""
    found = [m for m in _members(union) if value.get("type") in _tag(m)]
    assert len(found) == 1, f"no single member of {union} for type {value.get('type')!r}"
    return found[0]


def conforms(value: Any, kind: Any, where: str = "event") -> None:
    """Asserts `value` is a `kind` (TypedDicts exactly: declared keys only, required keys
    present), recursing into nested TypedDicts, lists, unions and literals."""
    origin = get_origin(kind)
    if _is_typeddict(kind):
        _conforms_typeddict(value, kind, where)
    elif origin is Literal:
        assert value in get_args(kind), f"{where}: {value!r} not in {get_args(kind)}"
    elif origin in (typing.Union, pytypes.UnionType):
        _conforms_union(value, kind, where)
    elif origin is list:
        assert isinstance(value, list), f"{where}: expected a list"
        for i, item in enumerate(value):
            conforms(item, get_args(kind)[0], f"{where}[{i}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: expected an object"
    elif kind is not Any:
        assert isinstance(value, kind) and (kind is bool or not isinstance(value, bool)), (
            f"{where}: {value!r} is not {kind}")


def _conforms_typeddict(value: Any, kind: Any, where: str) -> None:
    assert isinstance(value, dict), f"{where}: expected an object"
    keys = set(value)
    assert kind.__required_keys__ <= keys, (
        f"{where}: missing {kind.__required_keys__ - keys} ({kind.__name__})")
    assert keys <= kind.__required_keys__ | kind.__optional_keys__, (
        f"{where}: undeclared {keys - kind.__required_keys__ - kind.__optional_keys__} "
        f"({kind.__name__})")
    hints = get_type_hints(kind)
    for key, item in value.items():
        conforms(item, hints[key], f"{where}.{key}")


def _conforms_union(value: Any, kind: Any, where: str) -> None:
    members = get_args(kind)
    if value is None:
        assert type(None) in members, f"{where}: None is not allowed"
    elif all(_is_typeddict(m) or m is type(None) for m in members):
        conforms(value, _by_tag(kind, value), where)
    else:
        assert any(_fits(value, m) for m in members), f"{where}: {value!r} is not {kind}"


def _fits(value: Any, kind: Any) -> bool:
    try:
        conforms(value, kind)
    except AssertionError:
        return False
    return True


def _sdk_keys(params: Any) -> tuple[set[str], set[str]]:
    """An SDK params TypedDict's (required, all) keys, read from its annotations: the SDK
    declares `total=False` with `Required[...]` under postponed annotations, which its
    runtime `__required_keys__` does not see."""
    hints = get_type_hints(params, include_extras=True)
    return {k for k, h in hints.items() if get_origin(h) is typing.Required}, set(hints)


def test_the_checker_refuses_what_it_should():
    good = shapes.status_idle("requires_action", event_ids=["sevt_1"])
    conforms(good, et.SessionStatusIdleEvent)
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "stop_reason"},
                {**good, "stop_reason": {"type": "requires_action"}},
                {**good, "stop_reason": {"type": "done"}}, {**good, "id": 5}):
        with pytest.raises(AssertionError):
            conforms(bad, et.SessionStatusIdleEvent)


# Server events ------------------------------------------------------------------------------

START = outcomes.outcome_evaluation_start("outc_1", 0)
# Every builder, with its optional keys both present and absent somewhere in the list.
BUILDERS: list[Callable[[], Any]] = [
    lambda: shapes.agent_message("hello"),
    lambda: shapes.agent_message([{"type": "text", "text": "a"}], event_id="sevt_x"),
    shapes.agent_thinking,
    lambda: shapes.agent_tool_use("bash", {"command": "ls"}),
    lambda: shapes.agent_tool_use("bash", {}, policy="always_ask"),
    lambda: shapes.agent_tool_use("bash", {}, policy=None, permission="deny"),
    lambda: shapes.agent_tool_use("bash", {}, policy="auto", permission="allow"),
    lambda: shapes.agent_tool_use("bash", {}, policy="auto", permission="ask"),
    lambda: shapes.agent_tool_result("sevt_1", "out"),
    lambda: shapes.agent_tool_result("sevt_1", [], is_error=True),
    lambda: shapes.agent_custom_tool_use("lookup", {"word": "x"}),
    lambda: shapes.agent_mcp_tool_use("gh", "create_issue", {}),
    lambda: shapes.agent_mcp_tool_use("gh", "x", {}, policy="auto", permission="deny",
                                      reason_code="risky"),
    lambda: shapes.agent_mcp_tool_result("sevt_2", "done", is_error=True),
    shapes.agent_context_compacted,
    shapes.status_running,
    shapes.status_idle,
    lambda: shapes.status_idle("requires_action", event_ids=["sevt_1", "sevt_2"]),
    lambda: shapes.status_idle("retries_exhausted"),
    lambda: shapes.status_idle("budget_reached"),
    lambda: shapes.status_idle("refusal", stop_details={"type": "refusal",
                                                        "explanation": "no"}),
    shapes.status_rescheduled,
    shapes.status_terminated,
    shapes.session_deleted_event,
    lambda: shapes.session_updated_event({"title": "t", "budget": None, "status": "x"}),
    lambda: shapes.session_updated_event({"agent": {"id": "a"}, "metadata": {"k": "v"}}),
    lambda: shapes.session_error("model_overloaded_error", "busy", retry_status="retrying"),
    lambda: shapes.session_error("mcp_connection_failed_error", "down",
                                 mcp_server_name="gh"),
    lambda: shapes.session_error("repository_not_found_error", "gone",
                                 retry_status="exhausted", repository_url="https://x"),
    lambda: shapes.session_usage({"input_tokens": 5}),
    lambda: shapes.session_usage({}, {"type": "limit"}),
    shapes.model_request_start,
    lambda: shapes.model_request_end("sevt_4"),
    lambda: shapes.model_request_end("sevt_4", {"input_tokens": 7, "speed": "fast",
                                                "other": 1}, is_error=True),
    lambda: START,
    lambda: outcomes.outcome_evaluation_ongoing("outc_1", 1),
    lambda: outcomes.outcome_evaluation_end(START, "satisfied", "fine",
                                            {"input_tokens": 3}),
    lambda: multiagent.thread_created("sthr_1", "helper"),
    lambda: multiagent.thread_status("sthr_1", "helper", "running"),
    lambda: multiagent.thread_status("sthr_1", "helper", "idle"),
    lambda: multiagent.message_sent("sthr_1", "helper", "do it"),
    lambda: multiagent.message_received("sthr_1", None, "done"),
    lambda: multiagent.message_received("sthr_1", "helper", "done"),
]
BUILT = [build() for build in BUILDERS]


@pytest.mark.parametrize("event", BUILT, ids=lambda e: e["type"])
def test_each_builder_writes_exactly_its_type(event):
    conforms(event, _by_tag(et.ServerEvent, event))
    conforms(event, et.ServerEvent)


def test_every_server_event_type_is_built_and_every_optional_key_seen():
    built = {e["type"] for e in BUILT}
    declared = {tag for member in _members(et.ServerEvent) for tag in _tag(member)}
    assert built == declared
    for member in _members(et.ServerEvent):
        mine = [e for e in BUILT if e["type"] in _tag(member)]
        seen = set().union(*(set(e) for e in mine))
        assert seen == member.__required_keys__ | member.__optional_keys__, member.__name__


def test_the_builders_key_order_is_the_logs():
    """The JSON on the wire keeps its order: id and type first, processed_at after the
    event's own fields (the optional tool evaluation aside, written after it)."""
    for event in BUILT:
        keys = list(event)
        assert keys[:2] == ["id", "type"], keys
        assert keys.index("processed_at") >= len(keys) - 2, keys


def test_the_server_event_types_are_the_sdks():
    sdk = {get_args(m.model_fields["type"].annotation)[0]: m
           for m in get_args(get_args(BetaManagedAgentsSessionEvent)[0])}
    for member in _members(et.ServerEvent):
        for tag in _tag(member):
            assert tag in sdk, tag
            fields = set(sdk[tag].model_fields)
            declared = member.__required_keys__ | member.__optional_keys__
            assert declared <= fields, f"{tag}: {declared - fields} not in the SDK"
            # What the SDK requires, we declare as required.
            required = {n for n, f in sdk[tag].model_fields.items() if f.is_required()}
            assert required <= member.__required_keys__, f"{tag}: {required}"


def test_previews_are_their_types():
    conforms(shapes.event_start("sevt_m"), et.EventStartPreview)
    conforms(shapes.event_start("sevt_t", "agent.thinking"), et.EventStartPreview)
    conforms(shapes.event_delta("sevt_m", "he"), et.EventDeltaPreview)
    conforms(shapes.event_delta("sevt_m", "he", index=None), et.EventDeltaPreview)
    with pytest.raises(ShapeError):
        shapes.event_start("sevt_m", "agent.tool_use")


# Client events ------------------------------------------------------------------------------

SDK_CLIENT_EVENTS = {get_args(get_type_hints(p)["type"])[0]: p
                     for p in get_args(BetaManagedAgentsEventParams)}
# One valid event of each type a client may send, its optional fields left out.
SAMPLES: dict[str, JSON] = {
    "user.message": {"type": "user.message", "content": [{"type": "text", "text": "hi"}]},
    "user.interrupt": {"type": "user.interrupt"},
    "user.tool_confirmation": {"type": "user.tool_confirmation", "tool_use_id": "sevt_1",
                               "result": "allow"},
    "user.custom_tool_result": {"type": "user.custom_tool_result",
                                "custom_tool_use_id": "sevt_2"},
    "user.tool_result": {"type": "user.tool_result", "tool_use_id": "sevt_3"},
    "user.define_outcome": {"type": "user.define_outcome", "description": "a poem",
                            "rubric": {"type": "text", "content": "rhymes"}},
    "system.message": {"type": "system.message",
                       "content": [{"type": "text", "text": "be terse"}]},
}
FULL: dict[str, JSON] = {
    "user.interrupt": {"type": "user.interrupt", "session_thread_id": "sthr_1"},
    "user.tool_confirmation": {"type": "user.tool_confirmation", "tool_use_id": "sevt_1",
                               "result": "deny", "deny_message": "no"},
    "user.custom_tool_result": {"type": "user.custom_tool_result",
                                "custom_tool_use_id": "sevt_2", "is_error": True,
                                "content": [{"type": "text", "text": "42"}]},
    "user.define_outcome": {"type": "user.define_outcome", "description": "d",
                            "rubric": {"type": "file", "file_id": "file_1"},
                            "max_iterations": 5},
}


def test_every_sdk_client_event_has_a_type_and_a_check():
    mine = {tag: m for m in _members(shapes.ClientEvent) for tag in _tag(m)}
    assert set(SDK_CLIENT_EVENTS) == set(mine) == set(shapes.CLIENT_EVENT_TYPES)
    assert set(CLIENT_EVENTS) == set(mine) == set(SAMPLES)
    for tag, params in SDK_CLIENT_EVENTS.items():
        required, theirs = _sdk_keys(params)
        ours = mine[tag].__required_keys__ | mine[tag].__optional_keys__
        assert ours == theirs, tag
        # Every key the SDK requires is one the validator requires (it is in the events).
        assert required <= mine[tag].__required_keys__, tag


@pytest.mark.parametrize("sample", [*SAMPLES.values(), *FULL.values()],
                         ids=lambda e: e["type"])
def test_the_validator_returns_the_events_type(sample):
    [event] = shapes.send_events({"events": [sample]})
    conforms(event, _by_tag(shapes.ClientEvent, event))
    conforms(event, shapes.ClientEvent)
    record = shapes.client_event_record(event)
    conforms(record, _by_tag(shapes.ClientEventRecord, record))
    [again] = shapes.stored_client_events([{**record, "seq": 3}])
    assert again["id"] == record["id"] and again["type"] == sample["type"]
    conforms(public(record), shapes.ClientEventRecord)


def test_a_record_keeps_the_logs_key_order():
    event = shapes.send_events({"events": [FULL["user.tool_confirmation"]]})[0]
    assert list(shapes.client_event_record(event)) == [
        "id", "type", "tool_use_id", "result", "deny_message", "processed_at"]
    outcome = shapes.send_events({"events": [SAMPLES["user.define_outcome"]]})[0]
    assert list(public(shapes.client_event_record(outcome))) == [
        "id", "type", "description", "rubric", "max_iterations", "processed_at",
        "outcome_id"]


MALFORMED = [(tag, key) for tag, params in sorted(SDK_CLIENT_EVENTS.items())
             for key in sorted(_sdk_keys(params)[0] - {"type"})]


@pytest.mark.parametrize(("tag", "key"), MALFORMED, ids=[f"{t}-{k}" for t, k in MALFORMED])
def test_a_client_event_without_a_required_field_is_refused_naming_it(tag, key):
    bad = {k: v for k, v in SAMPLES[tag].items() if k != key}
    with pytest.raises(ShapeError) as caught:
        shapes.send_events({"events": [SAMPLES["user.interrupt"], bad]})
    assert caught.value.path == f"events[1].{key}"
    # `result` is read as a choice: its absence is "expected one of" the two answers.
    message = caught.value.message
    assert message == "required" or (key == "result" and message.startswith("expected one of"))


WRONG_TYPES = {"user.message": ("content", "hi"), "user.interrupt": ("session_thread_id", 5),
               "user.tool_confirmation": ("result", "maybe"),
               "user.custom_tool_result": ("is_error", "yes"),
               "user.tool_result": ("content", [{"type": "video"}]),
               "user.define_outcome": ("max_iterations", 0),
               "system.message": ("content", [{"type": "image"}])}


def test_malformed_client_events_are_a_400_naming_the_field(tmp_path: Path,
                                                            server: Any) -> None:
    """Through the real service: each client event type, missing a field or carrying a
    wrong one, is refused with a 400 whose message names the field."""
    from tests.serve.harness import cloud_setup, serving

    assert set(WRONG_TYPES) == set(SDK_CLIENT_EVENTS)
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        for tag, key in MALFORMED:
            bad = {k: v for k, v in SAMPLES[tag].items() if k != key}
            with pytest.raises(anthropic.BadRequestError, match=rf"events\[0\]\.{key}"):
                client.beta.sessions.events.send(session.id, events=[bad])
        for tag, (key, value) in WRONG_TYPES.items():
            bad = {**SAMPLES[tag], key: value}
            with pytest.raises(anthropic.BadRequestError, match=rf"events\[0\]\.{key}"):
                client.beta.sessions.events.send(session.id, events=[bad])
        logged = client.beta.sessions.events.list(session.id)
    assert logged.data == []  # nothing refused was logged
