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
    child_path,
    new_id,
    optional_field,
    read_bool,
    read_choice,
    read_int,
    read_items,
    read_object,
    read_str,
    read_variant,
    required_field,
    timestamp,
)
from wisp.serve.shapes.content import (
    MESSAGE_BLOCKS,
    RESULT_BLOCKS,
    read_blocks,
    read_file_source,
    read_text_block,
)
from wisp.serve.store.base import UNTAKEN

CLIENT_EVENT_TYPES: Final = ("user.message", "user.interrupt", "user.tool_confirmation",
                             "user.custom_tool_result", "user.define_outcome",
                             "user.tool_result", "system.message")


def _user_message(obj: JSON, path: str) -> JSON:
    content = read_blocks(required_field(obj, "content", path), child_path(path, "content"),
                          MESSAGE_BLOCKS)
    if not content:  # the model takes no empty turn: refused here, not mid-turn
        raise ShapeError(child_path(path, "content"), "must not be empty")
    return {"type": "user.message", "content": content}


def _user_interrupt(obj: JSON, path: str) -> JSON:
    event: JSON = {"type": "user.interrupt"}
    if obj.get("session_thread_id") is not None:
        event["session_thread_id"] = read_str(obj["session_thread_id"],
                                          child_path(path, "session_thread_id"))
    return event


def _tool_confirmation(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_confirmation",
            "tool_use_id": read_str(required_field(obj, "tool_use_id", path),
                                child_path(path, "tool_use_id"), empty=False),
            "result": read_choice(obj.get("result"), child_path(path, "result"), ("allow", "deny")),
            "deny_message": optional_field(obj, "deny_message", path, read_str)}


def _result_fields(obj: JSON, path: str) -> JSON:
    return {"content": optional_field(obj, "content", path,
                            lambda v, p: read_blocks(v, p, RESULT_BLOCKS), []),
            "is_error": optional_field(obj, "is_error", path, read_bool, False)}


def _custom_tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.custom_tool_result",
            "custom_tool_use_id": read_str(required_field(obj, "custom_tool_use_id", path),
                                       child_path(path, "custom_tool_use_id"), empty=False),
            **_result_fields(obj, path)}


def _tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_result",
            "tool_use_id": read_str(required_field(obj, "tool_use_id", path),
                                child_path(path, "tool_use_id"), empty=False),
            **_result_fields(obj, path)}


_RUBRICS: Final[Mapping[str, Parser]] = {
    "file": read_file_source,
    "text": lambda obj, path: {"type": "text", "content": read_str(
        required_field(obj, "content", path), child_path(path, "content"))}}


def _define_outcome(obj: JSON, path: str) -> JSON:
    return {"type": "user.define_outcome",
            "description": read_str(required_field(obj, "description", path),
                                    child_path(path, "description")),
            "rubric": read_variant(required_field(obj, "rubric", path), child_path(path, "rubric"),
                                   _RUBRICS),
            "max_iterations": optional_field(obj, "max_iterations", path,
                                   lambda v, p: read_int(v, p, 1, 20), 3)}


def _system_message(obj: JSON, path: str) -> JSON:
    return {"type": "system.message",
            "content": read_blocks(required_field(obj, "content", path),
                                   child_path(path, "content"),
                               {"text": read_text_block})}


_CLIENT_EVENTS: Final[Mapping[str, Parser]] = {
    "user.message": _user_message, "user.interrupt": _user_interrupt,
    "user.tool_confirmation": _tool_confirmation,
    "user.custom_tool_result": _custom_tool_result, "user.define_outcome": _define_outcome,
    "user.tool_result": _tool_result, "system.message": _system_message}


def client_event(value: object, path: str = "event",
                 kinds: Sequence[str] = CLIENT_EVENT_TYPES) -> JSON:
    """One event a client may post (its params, no id yet), normalised."""
    return read_variant(value, path, {kind: _CLIENT_EVENTS[kind] for kind in kinds})


def send_events(body: object) -> list[JSON]:
    """The body of `POST /v1/sessions/{id}/events` (`{"events": [...]}`), normalised."""
    obj = read_object(body, "")
    events = read_items(required_field(obj, "events", ""), "events", client_event)
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
