"""Client events: the body of `POST /v1/sessions/{id}/events`, the record of a posted
event in the log, and its `processed` second appearance."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    Parser,
    ShapeError,
    _at,
    _bool,
    _choice,
    _get,
    _int,
    _items,
    _obj,
    _required,
    _str,
    _variant,
    new_id,
    timestamp,
)
from wisp.serve.shapes.content import (
    _MESSAGE_BLOCKS,
    _RESULT_BLOCKS,
    _blocks,
    _file_source,
    _text_block,
)
from wisp.serve.store.base import UNTAKEN

CLIENT_EVENT_TYPES: Final = ("user.message", "user.interrupt", "user.tool_confirmation",
                             "user.custom_tool_result", "user.define_outcome",
                             "user.tool_result", "system.message")


def _user_message(obj: JSON, path: str) -> JSON:
    content = _blocks(_required(obj, "content", path), _at(path, "content"), _MESSAGE_BLOCKS)
    if not content:  # the model takes no empty turn: refused here, not mid-turn
        raise ShapeError(_at(path, "content"), "must not be empty")
    return {"type": "user.message", "content": content}


def _user_interrupt(obj: JSON, path: str) -> JSON:
    event: JSON = {"type": "user.interrupt"}
    if obj.get("session_thread_id") is not None:
        event["session_thread_id"] = _str(obj["session_thread_id"],
                                          _at(path, "session_thread_id"))
    return event


def _tool_confirmation(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_confirmation",
            "tool_use_id": _str(_required(obj, "tool_use_id", path),
                                _at(path, "tool_use_id"), empty=False),
            "result": _choice(obj.get("result"), _at(path, "result"), ("allow", "deny")),
            "deny_message": _get(obj, "deny_message", path, _str)}


def _result_fields(obj: JSON, path: str) -> JSON:
    return {"content": _get(obj, "content", path,
                            lambda v, p: _blocks(v, p, _RESULT_BLOCKS), []),
            "is_error": _get(obj, "is_error", path, _bool, False)}


def _custom_tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.custom_tool_result",
            "custom_tool_use_id": _str(_required(obj, "custom_tool_use_id", path),
                                       _at(path, "custom_tool_use_id"), empty=False),
            **_result_fields(obj, path)}


def _tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_result",
            "tool_use_id": _str(_required(obj, "tool_use_id", path),
                                _at(path, "tool_use_id"), empty=False),
            **_result_fields(obj, path)}


_RUBRICS: Final[Mapping[str, Parser]] = {
    "file": _file_source,
    "text": lambda obj, path: {"type": "text", "content": _str(
        _required(obj, "content", path), _at(path, "content"))}}


def _define_outcome(obj: JSON, path: str) -> JSON:
    return {"type": "user.define_outcome",
            "description": _str(_required(obj, "description", path), _at(path, "description")),
            "rubric": _variant(_required(obj, "rubric", path), _at(path, "rubric"), _RUBRICS),
            "max_iterations": _get(obj, "max_iterations", path,
                                   lambda v, p: _int(v, p, 1, 20), 3)}


def _system_message(obj: JSON, path: str) -> JSON:
    return {"type": "system.message",
            "content": _blocks(_required(obj, "content", path), _at(path, "content"),
                               {"text": _text_block})}


_CLIENT_EVENTS: Final[Mapping[str, Parser]] = {
    "user.message": _user_message, "user.interrupt": _user_interrupt,
    "user.tool_confirmation": _tool_confirmation,
    "user.custom_tool_result": _custom_tool_result, "user.define_outcome": _define_outcome,
    "user.tool_result": _tool_result, "system.message": _system_message}


def client_event(value: object, path: str = "event",
                 kinds: Sequence[str] = CLIENT_EVENT_TYPES) -> JSON:
    """One event a client may post (its params, no id yet), normalised."""
    return _variant(value, path, {kind: _CLIENT_EVENTS[kind] for kind in kinds})


def send_events(body: object) -> list[JSON]:
    """The body of `POST /v1/sessions/{id}/events` (`{"events": [...]}`), normalised."""
    obj = _obj(body, "")
    events = _items(_required(obj, "events", ""), "events", client_event)
    if not events:
        raise ShapeError("events", "must not be empty")
    return events


def client_event_record(params: JSON, *, processed_at: str | None = None) -> JSON:
    """A posted event as the log and the stream carry it: with its server `id`, and
    `processed_at` null while queued. `user.define_outcome` is accepted on receipt, so it
    gets its `outcome_id` (`outc_…`) and a `processed_at` at once; it stays queued for a
    worker (`UNTAKEN`) until its turn takes it up."""
    record = {"id": new_id("sevt"), **copy.deepcopy(params), "processed_at": processed_at}
    if params["type"] == "user.define_outcome":
        record["outcome_id"] = new_id("outc")
        record["processed_at"] = processed_at or timestamp()
        record[UNTAKEN] = True
    return record


def processed(event: JSON, *, now: str | None = None) -> JSON:
    """The second appearance of a client event: the agent has consumed it (one processed
    on receipt keeps its time)."""
    return {**event, "processed_at": event.get("processed_at") or now or timestamp()}


def send_events_response(records: Sequence[JSON]) -> JSON:
    """The body answering `POST /v1/sessions/{id}/events`."""
    return {"data": list(records)}
