"""The protocol's types and checks in-process: every request type wisp answers, valid and
invalid; stdin frame classification; the dispatcher answering an invalid request and going
on; the shared request-id matcher; the error tree; the hook event Literal."""

from __future__ import annotations

import asyncio
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from tests.protocol.cases import INVALID, VALID
from wisp import errors
from wisp.control.dispatcher import Dispatcher
from wisp.control.pending import PendingRequests
from wisp.control.stdin import parse_line
from wisp.hooks.model import EVENTS, HookEvent
from wisp.launch.options import PERMISSION_MODES
from wisp.mcp.client import McpError
from wisp.permissions.modes import PERMISSION_MODES as MODES_LITERAL
from wisp.permissions.modes import PermissionMode
from wisp.wire import protocol as p
from wisp.wire.writer import CollectingSink

JSON = dict[str, Any]
SRC = Path(__file__).resolve().parents[2] / "src" / "wisp"
SUBTYPE = "subtype"


def test_the_table_covers_every_request_type_wisp_answers():
    assert set(VALID) == set(p.INBOUND)
    assert {subtype for subtype, *_ in INVALID} == set(p.INBOUND) - {
        "mcp_status", "get_context_usage", "get_settings", "list_models", "get_session_cost",
        "reload_skills", "get_plan"}  # nothing to get wrong


@pytest.mark.parametrize(("subtype", "fields"),
                         [(s, f) for s, cases in VALID.items() for f in cases])
def test_valid_requests_pass_unchanged(subtype: str, fields: JSON):
    request = {"subtype": subtype, **fields}
    assert p.INBOUND[subtype].parse(request) is request


@pytest.mark.parametrize(("subtype", "fields", "error", "code"), INVALID)
def test_invalid_requests_are_refused_naming_the_field(subtype: str, fields: JSON, error: str,
                                                       code: str | None):
    with pytest.raises(errors.ControlError) as caught:
        p.INBOUND[subtype].parse({"subtype": subtype, **fields})
    assert str(caught.value) == error
    assert caught.value.code == code


@pytest.mark.parametrize("kind", list(p.INBOUND.values()), ids=lambda k: k.subtype)
def test_declared_fields_match_the_typed_dict(kind: p.RequestType[Any]):
    """The checks and the TypedDict a handler is typed with say the same thing."""
    typed = _typed_dict(kind.subtype)
    assert typed.__annotations__[SUBTYPE] == typing.Literal[kind.subtype]
    declared = {f.name for f in kind.fields}
    required = {f.name for f in kind.fields if f.required}
    # initialize's own, checked by its handler or acknowledged as not applied; and
    # mcp_set_servers' `servers`, checked by its extra check with the reference's phrase
    checked_elsewhere = ({"jsonSchema", "mcpServers", "settings", "managedSettings",
                          "disallowedTools"} if kind is p.INITIALIZE
                         else {"servers"} if kind is p.MCP_SET_SERVERS else set())
    assert required == set(typed.__required_keys__) - {SUBTYPE} - checked_elsewhere
    assert declared == set(typed.__annotations__) - {SUBTYPE} - checked_elsewhere


def _typed_dict(subtype: str) -> Any:
    for value in vars(p).values():
        annotations = getattr(value, "__annotations__", {})
        if (isinstance(value, type) and SUBTYPE in annotations
                and annotations[SUBTYPE] == typing.Literal[subtype]):
            return value
    raise AssertionError(f"no TypedDict for {subtype}")


def test_permission_modes_are_the_cli_s():
    assert MODES_LITERAL == PERMISSION_MODES
    assert typing.get_args(PermissionMode) == PERMISSION_MODES


# Stdin frames ------------------------------------------------------------------------------

FRAMES: list[tuple[str, bool]] = [
    ('{"type":"user","message":{"role":"user","content":"hi"}}', True),
    ('{"type":"user","message":{"content":[{"type":"text","text":"hi"}]}}', True),
    ('{"type":"user","message":{"content":5}}', False),
    ('{"type":"user"}', False),
    ('{"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}', True),
    ('{"type":"control_request","request_id":"r"}', False),
    ('{"type":"control_response","response":{"subtype":"success","request_id":"r"}}', True),
    ('{"type":"control_response","response":{"subtype":"maybe","request_id":"r"}}', False),
    ('{"type":"control_response","response":5}', False),
    ('{"type":"control_cancel_request","request_id":"r"}', True),
    ('{"type":"keep_alive"}', True),
    ('{"type":"bogus_frame_type"}', False),
]


@pytest.mark.parametrize(("raw", "typed"), FRAMES)
def test_each_line_is_parsed_once_into_its_typed_frame(raw: str, typed: bool):
    line = parse_line(1, raw.encode())
    assert line is not None and line.frame is not None and line.error is None
    assert (line.message is line.frame) if typed else line.message is None


def test_a_line_that_is_not_an_object_has_no_frame():
    line = parse_line(3, b"[1, 2]")
    assert line is not None and line.frame is None and line.message is None
    assert line.error == "expected a JSON object, got list"


# The dispatcher ----------------------------------------------------------------------------


def _exchange(requests: list[JSON]) -> tuple[list[JSON], list[JSON]]:
    """Runs requests through a dispatcher with typed handlers that record what they got;
    returns (the responses written, the requests the handlers saw)."""
    seen: list[JSON] = []

    async def record(request: Any) -> JSON:
        seen.append(request)
        return {"ok": request[SUBTYPE]}

    async def scenario() -> list[JSON]:
        sink = CollectingSink()
        dispatcher = Dispatcher(sink)
        for kind in p.INBOUND.values():
            dispatcher.on(kind, record)
        for number, request in enumerate(requests):
            dispatcher.receive({"type": "control_request", "request_id": f"r{number}",
                                "request": request})
        await dispatcher.drain()
        return [f["response"] for f in sink.frames]

    return asyncio.run(scenario()), seen


def test_the_dispatcher_refuses_an_invalid_request_and_goes_on():
    responses, seen = _exchange([
        {"subtype": "set_permission_mode"},
        {"subtype": "set_permission_mode", "mode": "plan"},
        {"subtype": "stop_task", "task_id": 5},
        {"subtype": "no_such_subtype_xyz"},
        {"subtype": "stop_task", "task_id": "t1"},
    ])
    by_id = {r["request_id"]: r for r in responses}
    assert by_id["r0"] == {"subtype": "error", "request_id": "r0", "error":
                           "Invalid set_permission_mode request: `mode` must be a string"}
    assert by_id["r1"] == {"subtype": "success", "request_id": "r1",
                           "response": {"ok": "set_permission_mode"}}
    assert by_id["r2"]["error"] == "Invalid stop_task request: `task_id` must be a string"
    assert by_id["r3"] == {"subtype": "error", "request_id": "r3",
                           "error": "Unsupported control request subtype: no_such_subtype_xyz",
                           "error_code": "unsupported_request"}
    assert by_id["r4"]["subtype"] == "success"
    assert [r[SUBTYPE] for r in seen] == ["set_permission_mode", "stop_task"]  # valid only


@pytest.mark.parametrize(("subtype", "fields", "error", "code"), INVALID)
def test_every_invalid_request_gets_its_error_answer(subtype: str, fields: JSON, error: str,
                                                     code: str | None):
    (response,), seen = _exchange([{"subtype": subtype, **fields}])
    expected = {"subtype": "error", "request_id": "r0", "error": error}
    assert response == ({**expected, "error_code": code} if code else expected)
    assert seen == []


def test_untyped_registration_still_gets_the_request_as_sent():
    async def scenario() -> list[JSON]:
        sink = CollectingSink()
        dispatcher = Dispatcher(sink)

        async def echo(request: JSON) -> JSON:
            return request

        dispatcher.register("anything", echo)
        dispatcher.receive({"type": "control_request", "request_id": "a",
                            "request": {"subtype": "anything", "x": 1}})
        await dispatcher.drain()
        return sink.frames

    (frame,) = asyncio.run(scenario())
    assert frame["response"]["response"] == {"subtype": "anything", "x": 1}


# The shared matcher ----------------------------------------------------------------------


def test_pending_requests_match_answers_early_late_and_after_close():
    async def scenario() -> None:
        pending: PendingRequests[str, int] = PendingRequests(keep_unmatched=2)
        assert not pending.settle("early", 1)  # nobody waits yet: kept
        assert await pending.expect("early") == 1
        waiting = pending.expect("a")
        assert pending.settle("a", 2) and await waiting == 2
        pending.release("a")
        for key in ("x", "y", "z"):  # only the last two unmatched answers are kept
            pending.settle(key, 0)
        evicted, kept = pending.expect("x"), pending.expect("z")
        assert not evicted.done() and kept.done()
        assert not pending.reject("gone", RuntimeError("withdrawn"), keep=False)
        gone = pending.expect("gone")
        assert not gone.done()  # a withdrawal is not kept as an answer
        pending.close(RuntimeError("peer gone"))
        for left in (evicted, gone):
            with pytest.raises(RuntimeError, match="peer gone"):
                await left
        with pytest.raises(RuntimeError, match="peer gone"):
            pending.expect("c")

    asyncio.run(scenario())


def test_without_keep_unmatched_a_stray_answer_is_dropped():
    async def scenario() -> None:
        pending: PendingRequests[int, str] = PendingRequests()
        assert not pending.settle(1, "stray")
        assert not pending.expect(1).done()
        pending.close(RuntimeError("done"))

    asyncio.run(scenario())


# Errors and hooks --------------------------------------------------------------------------


def test_control_and_mcp_errors_join_the_wisp_error_tree():
    for error in (errors.ControlError, errors.InvalidRequest, errors.RequestFailed,
                  errors.McpError):
        assert issubclass(error, errors.WispError)
    assert issubclass(errors.InvalidRequest, errors.ControlError)
    assert McpError is errors.McpError
    from wisp.control import dispatcher

    assert dispatcher.ControlError is errors.ControlError
    assert dispatcher.RequestFailed is errors.RequestFailed


def _fired_events() -> set[str]:
    """Every event name the engine (and the runtime's elicitation) passes to `fire(...)`,
    read from the source: a literal argument, or a variable set from literals on the line
    before. (Text, not `ast`: Python 3.11's parser can trip on its own recursion counter
    late in a test run.)"""
    names: set[str] = set()
    # The engine fires the turn's events; the runtime those of MCP elicitation.
    for path in [*(SRC / "engine").glob("*.py"), SRC / "runtime" / "elicitation.py"]:
        text = path.read_text()
        names.update(re.findall(r'\bfire\([\w.]+,\s*"(\w+)"', text))
        for variable in re.findall(r"\bfire\([\w.]+,\s*(\w+)\b", text):
            pattern = rf"^\s*{variable}(?:\s*:\s*\w+)?\s*=\s*(.+)$"
            for assigned in re.findall(pattern, text, re.MULTILINE):
                names.update(re.findall(r'"(\w+)"', assigned))
    return names


def test_hook_events_are_exactly_the_ones_the_engine_fires():
    assert typing.get_args(HookEvent) == EVENTS
    assert set(EVENTS) == _fired_events()
