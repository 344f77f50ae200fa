"""Client events: the body of `POST /v1/sessions/{id}/events`, the record of a posted
event in the log, and its `processed` second appearance.

Each event a client may post has a `TypedDict` with a `Literal` tag (the SDK's
`BetaManagedAgents*EventParams`), their union is `ClientEvent`, and the validators
(`client_event`, `send_events`) return it. A posted event as the log keeps it (`id`,
`processed_at`, an outcome's `outcome_id`) is a `ClientEventRecord`; what the store hands
back is turned into one once, by `stored_client_events`."""
# No `from __future__ import annotations`: the TypedDicts' `__required_keys__` and
# `__optional_keys__` must see `NotRequired` at runtime (the tests read them).

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal, NotRequired, TypedDict, TypeGuard, cast

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

ClientEventType = Literal["user.message", "user.interrupt", "user.tool_confirmation",
                          "user.custom_tool_result", "user.define_outcome",
                          "user.tool_result", "system.message"]
CLIENT_EVENT_TYPES: Final[tuple[ClientEventType, ...]] = (
    "user.message", "user.interrupt", "user.tool_confirmation", "user.custom_tool_result",
    "user.define_outcome", "user.tool_result", "system.message")


class UserMessageParams(TypedDict):
    type: Literal["user.message"]
    content: list[JSON]  # not empty


class UserInterruptParams(TypedDict):
    type: Literal["user.interrupt"]
    session_thread_id: NotRequired[str]  # absent: every thread


class ToolConfirmationParams(TypedDict):
    type: Literal["user.tool_confirmation"]
    tool_use_id: str
    result: Literal["allow", "deny"]
    deny_message: str | None


class CustomToolResultParams(TypedDict):
    type: Literal["user.custom_tool_result"]
    custom_tool_use_id: str
    content: list[JSON]
    is_error: bool


class ToolResultParams(TypedDict):
    type: Literal["user.tool_result"]
    tool_use_id: str
    content: list[JSON]
    is_error: bool


class DefineOutcomeParams(TypedDict):
    type: Literal["user.define_outcome"]
    description: str
    rubric: JSON  # {"type": "text", "content"} or {"type": "file", "file_id"}
    max_iterations: int


class SystemMessageParams(TypedDict):
    type: Literal["system.message"]
    content: list[JSON]  # text blocks


ClientEvent = (UserMessageParams | UserInterruptParams | ToolConfirmationParams
               | CustomToolResultParams | ToolResultParams | DefineOutcomeParams
               | SystemMessageParams)


class _Record(TypedDict):
    id: str  # sevt_…
    processed_at: str | None  # None while queued


class UserMessageEvent(UserMessageParams, _Record):
    pass


class UserInterruptEvent(UserInterruptParams, _Record):
    pass


class ToolConfirmationEvent(ToolConfirmationParams, _Record):
    pass


class CustomToolResultEvent(CustomToolResultParams, _Record):
    pass


class ToolResultEvent(ToolResultParams, _Record):
    pass


class DefineOutcomeEvent(DefineOutcomeParams, _Record):
    outcome_id: str  # outc_…
    _untaken: NotRequired[bool]  # store.base.UNTAKEN: queued for a worker, never shown


class SystemMessageEvent(SystemMessageParams, _Record):
    pass


ClientEventRecord = (UserMessageEvent | UserInterruptEvent | ToolConfirmationEvent
                     | CustomToolResultEvent | ToolResultEvent | DefineOutcomeEvent
                     | SystemMessageEvent)
Answer = CustomToolResultEvent | ToolResultEvent  # a client's result for a call it ran
TurnStarter = UserMessageEvent | DefineOutcomeEvent  # an event a turn is run for
Reply = Answer | ToolConfirmationEvent  # what a call waiting on the client receives


def user_message(obj: JSON, path: str) -> UserMessageParams:
    content = read_blocks(required_field(obj, "content", path), child_path(path, "content"),
                          MESSAGE_BLOCKS)
    if not content:  # the model takes no empty turn: refused here, not mid-turn
        raise ShapeError(child_path(path, "content"), "must not be empty")
    return {"type": "user.message", "content": content}


def user_interrupt(obj: JSON, path: str) -> UserInterruptParams:
    event: UserInterruptParams = {"type": "user.interrupt"}
    if obj.get("session_thread_id") is not None:
        event["session_thread_id"] = read_str(obj["session_thread_id"],
                                          child_path(path, "session_thread_id"))
    return event


def tool_confirmation(obj: JSON, path: str) -> ToolConfirmationParams:
    result = read_choice(obj.get("result"), child_path(path, "result"), ("allow", "deny"))
    return {"type": "user.tool_confirmation",
            "tool_use_id": read_str(required_field(obj, "tool_use_id", path),
                                child_path(path, "tool_use_id"), empty=False),
            "result": "allow" if result == "allow" else "deny",
            "deny_message": optional_field(obj, "deny_message", path, read_str)}


def _result_content(obj: JSON, path: str) -> list[JSON]:
    content: list[JSON] = optional_field(obj, "content", path,
                               lambda v, p: read_blocks(v, p, RESULT_BLOCKS), [])
    return content


def _is_error(obj: JSON, path: str) -> bool:
    return bool(optional_field(obj, "is_error", path, read_bool, False))


def custom_tool_result(obj: JSON, path: str) -> CustomToolResultParams:
    return {"type": "user.custom_tool_result",
            "custom_tool_use_id": read_str(required_field(obj, "custom_tool_use_id", path),
                                       child_path(path, "custom_tool_use_id"), empty=False),
            "content": _result_content(obj, path), "is_error": _is_error(obj, path)}


def tool_result(obj: JSON, path: str) -> ToolResultParams:
    return {"type": "user.tool_result",
            "tool_use_id": read_str(required_field(obj, "tool_use_id", path),
                                child_path(path, "tool_use_id"), empty=False),
            "content": _result_content(obj, path), "is_error": _is_error(obj, path)}


_RUBRICS: Final[Mapping[str, Parser]] = {
    "file": read_file_source,
    "text": lambda obj, path: {"type": "text", "content": read_str(
        required_field(obj, "content", path), child_path(path, "content"))}}


def define_outcome(obj: JSON, path: str) -> DefineOutcomeParams:
    return {"type": "user.define_outcome",
            "description": read_str(required_field(obj, "description", path),
                                    child_path(path, "description")),
            "rubric": read_variant(required_field(obj, "rubric", path), child_path(path, "rubric"),
                                   _RUBRICS),
            "max_iterations": optional_field(obj, "max_iterations", path,
                                   lambda v, p: read_int(v, p, 1, 20), 3)}


def system_message(obj: JSON, path: str) -> SystemMessageParams:
    return {"type": "system.message",
            "content": read_blocks(required_field(obj, "content", path),
                                   child_path(path, "content"),
                               {"text": read_text_block})}


# Each event type's check: the object as posted (its `type` already read) → the event.
CLIENT_EVENTS: Final[Mapping[ClientEventType, Callable[[JSON, str], ClientEvent]]] = {
    "user.message": user_message, "user.interrupt": user_interrupt,
    "user.tool_confirmation": tool_confirmation,
    "user.custom_tool_result": custom_tool_result, "user.define_outcome": define_outcome,
    "user.tool_result": tool_result, "system.message": system_message}


def client_event(value: object, path: str = "event",
                 kinds: Sequence[ClientEventType] = CLIENT_EVENT_TYPES) -> ClientEvent:
    """One event a client may post (its params, no id yet), normalised."""
    checks: dict[str, Parser] = {kind: cast(Parser, CLIENT_EVENTS[kind]) for kind in kinds}
    # Each check returns the TypedDict of the type `read_variant` dispatched it on.
    return cast(ClientEvent, read_variant(value, path, checks))


def client_events(value: object, path: str,
                  kinds: Sequence[ClientEventType] = CLIENT_EVENT_TYPES) -> list[ClientEvent]:
    """A list of client events (`path[i]` names the one at fault)."""
    events = read_items(value, path, lambda v, p: cast(JSON, client_event(v, p, kinds)))
    return cast(list[ClientEvent], events)  # what client_event returned, item by item


def send_events(body: object) -> list[ClientEvent]:
    """The body of `POST /v1/sessions/{id}/events` (`{"events": [...]}`), normalised."""
    obj = read_object(body, "")
    events = client_events(required_field(obj, "events", ""), "events")
    if not events:
        raise ShapeError("events", "must not be empty")
    return events


def stored_client_events(entries: Sequence[JSON]) -> list[ClientEventRecord]:
    """Client events as the store hands them back (`Store.queued`, a log page). The
    boundary where log entries become typed again: the store holds what
    `client_event_record` made of what the validator returned, so no check is repeated
    (extra store fields such as `seq` ride along)."""
    return [cast(ClientEventRecord, entry) for entry in entries]


def starts_a_turn(event: ClientEventRecord) -> TypeGuard[TurnStarter]:
    """Whether the event is a turn of its own (`user.message`, `user.define_outcome`)."""
    return event["type"] in ("user.message", "user.define_outcome")


def client_event_record(params: ClientEvent, *,
                        processed_at: str | None = None) -> ClientEventRecord:
    """A posted event as the log and the stream carry it: with its server `id`, and
    `processed_at` null while queued. `user.define_outcome` is accepted on receipt, so it
    gets its `outcome_id` (`outc_…`) and a `processed_at` at once; it stays queued for a
    worker (`UNTAKEN`) until its turn takes it up."""
    # Built as JSON, in the key order the log has always had (id, the params,
    # processed_at, then an outcome's fields): the keys are ClientEventRecord's.
    record: JSON = {"id": new_id("sevt"), **copy.deepcopy(cast(JSON, params)),
                    "processed_at": processed_at}
    if params["type"] == "user.define_outcome":
        record["outcome_id"] = new_id("outc")
        record["processed_at"] = processed_at or timestamp()
        record[UNTAKEN] = True
    return cast(ClientEventRecord, record)


def processed(event: JSON, *, now: str | None = None) -> JSON:
    """The second appearance of a client event: the agent has consumed it (one processed
    on receipt keeps its time)."""
    return {**event, "processed_at": event.get("processed_at") or now or timestamp()}


def send_events_response(records: Sequence[JSON]) -> JSON:
    """The body answering `POST /v1/sessions/{id}/events`."""
    return {"data": list(records)}
