"""`wisp.sdk._parse.parse_message` against the official SDK's parser, frame by frame.

The corpus is every CLI output frame in the reference captures plus constructed frames:
each message type and system subtype, each content block kind, every optional field
present and absent, and systematic mutations of each (a field removed, or replaced by a
value of the wrong kind). For each frame both parsers must agree: the same class and
equal field values all the way down, both None, or both refusing the frame.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.shared_fixtures import SHARED, shared_path
from wisp.sdk import types as ours
from wisp.sdk._parse import parse_message
from wisp.sdk.errors import MessageParseError

official_parser = pytest.importorskip("claude_agent_sdk._internal.message_parser")
official_errors = pytest.importorskip("claude_agent_sdk._errors")

CAPTURES = SHARED / "reference" / "captures"
SESSION = "1b0e7e1c-0000-4000-8000-000000000001"
UUID = "5d2e0f5a-0000-4000-8000-000000000002"


# ---------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            yield number, json.loads(line)
        except ValueError:
            continue  # text output (--output-format text), not a frame


def _frames_in(path: Path, name: str) -> Iterator[tuple[str, Any]]:
    if path.name == "stdout":
        for number, value in _json_lines(path):
            # `--output-format json --verbose` prints one array of frames.
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                yield f"{name}:{number}:{index}", item
        return
    # Logs of both directions: keep what the CLI wrote.
    wanted = {"transcript.trimmed.ndjson": ("dir", "out", "frame"),
              "wire.ndjson": ("dir", "cli->sdk", "msg")}.get(path.name)
    if wanted is not None:
        key, direction, payload = wanted
        for number, entry in _json_lines(path):
            if isinstance(entry, dict) and entry.get(key) == direction:
                yield f"{name}:{number}", entry[payload]
    elif path.suffix == ".jsonl":
        # Session transcripts: not stdout frames, but real CLI dicts of many types.
        for number, entry in _json_lines(path):
            yield f"{name}:{number}", entry


def capture_frames() -> list[tuple[str, Any]]:
    """(id, frame) for every frame the CLI wrote to stdout in the captures; none when they
    are missing (test_captures_are_present then fails, or skips when opted out)."""
    if not CAPTURES.is_dir():
        return []
    frames: list[tuple[str, Any]] = []
    for path in sorted(CAPTURES.rglob("*")):
        if path.is_file():
            frames.extend(_frames_in(path, path.relative_to(CAPTURES).as_posix()))
    return frames


USAGE = {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 0}
MODEL_USAGE = {
    "claude-x": {
        "inputTokens": 10,
        "outputTokens": 2,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": 0.01,
        "contextWindow": 200000,
        "maxOutputTokens": 32000,
    }
}
TEXT = {"type": "text", "text": "hello"}
THINKING = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False}
SERVER_TOOL_USE = {"type": "server_tool_use", "id": "srv_1", "name": "advisor", "input": {}}
ADVISOR_RESULT = {
    "type": "advisor_tool_result",
    "tool_use_id": "srv_1",
    "content": {"type": "advisor_result", "text": "do it"},
}
OTHER_BLOCKS = [
    {"type": "redacted_thinking", "data": "xyz"},
    {"type": "web_search_tool_result", "tool_use_id": "srv_2", "content": []},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
    {"type": "future_block"},
]
ORIGINS = [
    {"kind": "human"},
    {"kind": "peer", "from": "x", "name": "n", "extra": 1},
    {"kind": 3},
    {"server": "no kind"},
    "human",
    None,
]


def base_frames() -> dict[str, dict[str, Any]]:
    """One well-formed frame per message type and system subtype, all optional fields
    present."""
    assistant_message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [TEXT, THINKING, TOOL_USE, TOOL_RESULT, SERVER_TOOL_USE, ADVISOR_RESULT],
        "stop_reason": "tool_use",
        "usage": USAGE,
    }
    task_usage = {"total_tokens": 5, "tool_uses": 1, "duration_ms": 30}
    common = {"uuid": UUID, "session_id": SESSION}
    return {
        "user_text": {
            "type": "user",
            "message": {"role": "user", "content": "hi"},
            "parent_tool_use_id": None,
            "tool_use_result": None,
            "origin": {"kind": "human"},
            **common,
        },
        "user_blocks": {
            "type": "user",
            "message": {"role": "user", "content": [TEXT, TOOL_USE, TOOL_RESULT, THINKING]},
            "parent_tool_use_id": "toolu_0",
            "tool_use_result": {"stdout": "ok"},
            **common,
        },
        "assistant": {
            "type": "assistant",
            "message": assistant_message,
            "parent_tool_use_id": None,
            "error": "rate_limit",
            "user_message_uuid": "u-1",
            "user_message_uuids": ["u-1", "u-2"],
            **common,
        },
        "system_init": {
            "type": "system",
            "subtype": "init",
            "cwd": "/w",
            "tools": ["Bash"],
            "model": "claude-x",
            "permissionMode": "default",
            **common,
        },
        "system_other": {"type": "system", "subtype": "compact_boundary", **common},
        "task_started": {
            "type": "system",
            "subtype": "task_started",
            "task_id": "t1",
            "description": "do",
            "tool_use_id": "toolu_9",
            "task_type": "local_agent",
            **common,
        },
        "task_progress": {
            "type": "system",
            "subtype": "task_progress",
            "task_id": "t1",
            "description": "doing",
            "usage": task_usage,
            "tool_use_id": "toolu_9",
            "last_tool_name": "Read",
            **common,
        },
        "task_notification": {
            "type": "system",
            "subtype": "task_notification",
            "task_id": "t1",
            "status": "completed",
            "output_file": "/tmp/o",
            "summary": "done",
            "tool_use_id": "toolu_9",
            "usage": task_usage,
            **common,
        },
        "task_updated": {
            "type": "system",
            "subtype": "task_updated",
            "task_id": "t1",
            "patch": {"status": "killed", "end_time": 5},
            **common,
        },
        "mirror_error": {
            "type": "system",
            "subtype": "mirror_error",
            "key": {"project_key": "p", "session_id": SESSION},
            "error": "boom",
        },
        "hook_started": {
            "type": "system",
            "subtype": "hook_started",
            "hook_id": "h1",
            "hook_name": "PreToolUse:Bash",
            "hook_event": "PreToolUse",
            **common,
        },
        "hook_response": {
            "type": "system",
            "subtype": "hook_response",
            "hook_event_name": "Stop",
            "output": "",
            "exit_code": 0,
            "outcome": "success",
            **common,
        },
        "result_success": {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 100,
            "duration_api_ms": 80,
            "num_turns": 1,
            "result": "hello",
            "stop_reason": "end_turn",
            "total_cost_usd": 0.01,
            "usage": USAGE,
            "modelUsage": MODEL_USAGE,
            "permission_denials": [{"tool_name": "Write"}],
            "structured_output": {"a": 1},
            "terminal_reason": "completed",
            "origin": {"kind": "task-notification", "subkind": "scheduled-trigger"},
            "user_message_uuid": "u-1",
            "user_message_uuids": ["u-1"],
            **common,
        },
        "result_error": {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "duration_ms": 100,
            "duration_api_ms": 80,
            "num_turns": 2,
            "errors": ["it broke"],
            "api_error_status": 529,
            "deferred_tool_use": {"id": "toolu_5", "name": "Bash", "input": {"command": "x"}},
            **common,
        },
        "stream_event": {
            "type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": "he"}},
            "parent_tool_use_id": "toolu_0",
            "user_message_uuid": "u-1",
            "user_message_uuids": ["u-1"],
            **common,
        },
        "rate_limit_event": {
            "type": "rate_limit_event",
            "rate_limit_info": {
                "status": "allowed_warning",
                "resetsAt": 1700000000,
                "rateLimitType": "five_hour",
                "utilization": 0.9,
                "overageStatus": "rejected",
                "overageResetsAt": 1700000500,
                "overageDisabledReason": "out_of_credits",
                "unmodelled": True,
            },
            **common,
        },
        "conversation_reset": {
            "type": "conversation_reset",
            "new_conversation_id": "c-2",
            **common,
        },
    }


# Values of the wrong kind a field may be replaced with.
WRONG_VALUES: dict[str, Any] = {
    "none": None,
    "str": "x",
    "empty": "",
    "int": 0,
    "list": [1],
    "dict": {},
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path into nested dicts and lists of dicts (depth-first, in order)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield (*prefix, index)
                yield from _paths(item, (*prefix, index))


def _mutated(frame: dict[str, Any], path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    copied = copy.deepcopy(frame)
    target: Any = copied
    for step in path[:-1]:
        target = target[step]
    if drop:
        del target[path[-1]]
    else:
        target[path[-1]] = copy.deepcopy(value)
    return copied


def _label(path: tuple[Any, ...]) -> str:
    return ".".join(str(step) for step in path)


def mutated_frames() -> list[tuple[str, Any]]:
    """Each base frame, then with each field removed or given a value of the wrong kind."""
    frames: list[tuple[str, Any]] = []
    for name, frame in base_frames().items():
        frames.append((name, frame))
        # Shallow event payloads are opaque to the parser; skip mutating inside them.
        for path in _paths(frame):
            if path[0] in ("event", "usage", "modelUsage", "tool_use_result") and len(path) > 1:
                continue
            frames.append((f"{name}-drop-{_label(path)}", _mutated(frame, path, None, True)))
            for kind, wrong in WRONG_VALUES.items():
                frames.append(
                    (f"{name}-{kind}-{_label(path)}", _mutated(frame, path, wrong, False))
                )
    return frames


def minimal_frames() -> dict[str, Any]:
    """Every optional field absent: only what each official constructor requires."""
    return {
        "user_min": {"type": "user", "message": {"content": "hi"}},
        "assistant_min": {"type": "assistant", "message": {"content": [], "model": "m"}},
        "system_min": {"type": "system", "subtype": "anything"},
        "task_started_min": {"type": "system", "subtype": "task_started", "task_id": "t",
                             "description": "d", "uuid": UUID, "session_id": SESSION},
        "task_progress_min": {"type": "system", "subtype": "task_progress", "task_id": "t",
                              "description": "d", "usage": {}, "uuid": UUID,
                              "session_id": SESSION},
        "task_notification_min": {"type": "system", "subtype": "task_notification",
                                  "task_id": "t", "status": "failed", "output_file": "",
                                  "summary": "", "uuid": UUID, "session_id": SESSION},
        "task_updated_min": {"type": "system", "subtype": "task_updated"},
        "mirror_error_min": {"type": "system", "subtype": "mirror_error"},
        "hook_started_min": {"type": "system", "subtype": "hook_started"},
        "hook_response_min": {"type": "system", "subtype": "hook_response"},
        "result_min": {"type": "result", "subtype": "success", "duration_ms": 1,
                       "duration_api_ms": 1, "is_error": False, "num_turns": 0,
                       "session_id": SESSION},
        "stream_event_min": {"type": "stream_event", "uuid": UUID, "session_id": SESSION,
                             "event": {}},
        "rate_limit_min": {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"},
                           "uuid": UUID, "session_id": SESSION},
        "conversation_reset_min": {"type": "conversation_reset", "new_conversation_id": "c",
                                   "uuid": UUID, "session_id": SESSION},
    }


def special_frames() -> list[tuple[str, Any]]:
    """Edge cases of particular fields."""
    frames: list[tuple[str, Any]] = []
    result_min = minimal_frames()["result_min"]
    # Hook event names: which of the three keys wins, and falsy values.
    for index, names in enumerate([
        {"hook_event": "A", "hook_name": "B", "hook_event_name": "C"},
        {"hook_event": "", "hook_name": "B", "hook_event_name": "C"},
        {"hook_event": None, "hook_name": None, "hook_event_name": "C"},
        {"hook_event": 0, "hook_name": [], "hook_event_name": None},
        {"hook_name": "B"},
    ]):
        frames.append((f"hook-names-{index}",
                       {"type": "system", "subtype": "hook_response", **names}))
    # Content blocks of other kinds, in both roles, and the block list itself.
    for role in ("user", "assistant"):
        for index, block in enumerate(OTHER_BLOCKS):
            frames.append((f"{role}-other-block-{index}", {
                "type": role, "message": {"content": [TEXT, block], "model": "m"}}))
        for index, content in enumerate([[], "text", None, {"a": 1}, 5, [TEXT, "bare"],
                                         [{"type": None}], [{"no_type": 1}], [[TEXT]]]):
            frames.append((f"{role}-content-{index}", {
                "type": role, "message": {"content": content, "model": "m"}}))
    for index, origin in enumerate(ORIGINS):
        frames.append((f"user-origin-{index}",
                       {"type": "user", "message": {"content": "x"}, "origin": origin}))
        frames.append((f"result-origin-{index}", {**result_min, "origin": origin}))
    for index, patch in enumerate([None, [], "x", {}, {"status": "running"}, {"end_time": 3}]):
        frames.append((f"task-updated-patch-{index}",
                       {"type": "system", "subtype": "task_updated", "patch": patch,
                        "task_id": None}))
    for index, deferred in enumerate([None, {}, [], 0, "", False, {"id": "x"},
                                      {"id": "a", "name": "b", "input": None}, "abc", [1]]):
        frames.append((f"result-deferred-{index}",
                       {**result_min, "deferred_tool_use": deferred}))
    return frames


def envelope_frames() -> list[tuple[str, Any]]:
    """Not a dict, no type, types that are not messages, odd system subtypes."""
    frames: list[tuple[str, Any]] = []
    for index, value in enumerate([None, [], [{"type": "user"}], "user", 0, 1.5, True]):
        frames.append((f"not-a-dict-{index}", value))
    for index, kind in enumerate([None, "", 0, False, [], {}, 1, True, ["user"], {"a": 1},
                                  "control_request", "control_response",
                                  "control_cancel_request", "keep_alive", "transcript_mirror",
                                  "tool_progress", "auth_status", "USER", " user", "future"]):
        frames.append((f"type-{index}", {"type": kind, "subtype": "init"}))
    frames.append(("no-type", {"subtype": "init", "session_id": SESSION}))
    for index, subtype in enumerate([None, "", 0, [], {}, ["task_started"], "TASK_STARTED",
                                     "hook_started "]):
        frames.append((f"system-subtype-{index}", {"type": "system", "subtype": subtype}))
    frames.append(("system-no-subtype", {"type": "system", "session_id": SESSION}))
    return frames


def constructed_frames() -> list[tuple[str, Any]]:
    return [*mutated_frames(), *minimal_frames().items(), *special_frames(),
            *envelope_frames()]


CORPUS = capture_frames() + constructed_frames()


def test_corpus_ids_are_unique() -> None:
    ids = [frame_id for frame_id, _ in CORPUS]
    assert len(ids) == len(set(ids))


def test_corpus_covers_the_captures() -> None:
    """The capture cases are collected at import, so a missing folder would leave them out
    without a word: this test is where their absence fails."""
    shared_path("reference/captures")
    assert sum(1 for i, _ in CORPUS if i.startswith(("cli/", "sdk/"))) > 500


# ---------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------


def shape(value: Any) -> Any:
    """A comparable form that keeps class names, unlike `dataclasses.asdict` (where a
    ToolUseBlock and a ServerToolUseBlock with the same fields would look equal)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            {f.name: shape(getattr(value, f.name)) for f in dataclasses.fields(value)},
        )
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    return value


# What each parser may raise for a frame it refuses; anything else is a bug in that
# parser and errors the test instead of counting as a refusal both sides share.
OFFICIAL_REFUSALS = (official_errors.MessageParseError, TypeError)
OUR_REFUSALS = (MessageParseError,)


def outcome(parse: Any, frame: Any, refusals: tuple[type[Exception], ...]) -> tuple[Any, ...]:
    try:
        message = parse(copy.deepcopy(frame))
    except refusals as error:
        return ("raised", error)
    if message is None:
        return ("none",)
    return ("message", message)


def _mro_names(value: Any) -> list[str]:
    return [cls.__name__ for cls in type(value).__mro__]


@pytest.mark.parametrize(("frame_id", "frame"), CORPUS, ids=[i for i, _ in CORPUS])
def test_same_result_as_official_parser(frame_id: str, frame: Any) -> None:
    theirs = outcome(official_parser.parse_message, frame, OFFICIAL_REFUSALS)
    mine = outcome(parse_message, frame, OUR_REFUSALS)
    if theirs[0] == "raised":
        assert mine[0] == "raised", f"official raised {theirs[1]!r}, we gave {mine}"
        error = mine[1]
        # Where the official parser lets a TypeError out, we raise MessageParseError.
        assert isinstance(error, MessageParseError), repr(error)
        assert error.data == frame
        if isinstance(theirs[1], official_errors.MessageParseError):
            assert str(error) == str(theirs[1])
        return
    assert mine[0] == theirs[0], f"official gave {theirs}, we gave {mine}"
    if theirs[0] == "message":
        official_message, message = theirs[1], mine[1]
        assert _mro_names(message)[:-1] == _mro_names(official_message)[:-1]
        assert shape(message) == shape(official_message)
        assert dataclasses.asdict(message) == dataclasses.asdict(official_message)


def test_system_messages_carry_the_frame_itself() -> None:
    frame = {"type": "system", "subtype": "task_updated", "patch": {"status": "failed"}}
    message = parse_message(frame)
    assert isinstance(message, ours.TaskUpdatedMessage)
    assert isinstance(message, ours.SystemMessage)
    assert message.data is frame
    assert message.status == "failed"
    assert message.status in ours.TERMINAL_TASK_STATUSES


def test_parse_error_keeps_the_frame_and_names_the_field() -> None:
    frame = {"type": "result", "subtype": "success"}
    with pytest.raises(MessageParseError) as caught:
        parse_message(frame)
    assert caught.value.data is frame
    assert str(caught.value) == "Missing required field in result message: 'duration_ms'"


def test_malformed_shape_is_a_parse_error_not_a_type_error() -> None:
    frame = {"type": "assistant", "message": "not a dict"}
    with pytest.raises(MessageParseError) as caught:
        parse_message(frame)
    assert isinstance(caught.value.__cause__, TypeError)
