"""Stream-json output frames to typed messages, as the official SDK's parser makes them.

The same frames become the same classes with the same field values, and the same frames
are refused or skipped:

- a frame that is not a dict, has no (or an empty) `type`, lacks a field the official
  parser requires, or has a content block that is not a dict raises `MessageParseError`
  (the official parser lets a `TypeError` escape for some malformed shapes, such as a
  string where a dict belongs; here those are `MessageParseError` too);
- frames of a type it does not know (control frames, keep-alives, newer CLI frames) give
  None, so old SDKs survive new CLIs;
- content blocks of a kind it does not know are dropped, and user messages keep only
  text, tool_use and tool_result blocks;
- `system` frames keep the whole frame as `data`; task, mirror-error and hook frames
  become the `SystemMessage` subclasses.

This runs once per output frame (a streamed reply is one frame per token delta), so it
is plain dict access and direct constructor calls.
"""

from collections.abc import Callable
from typing import cast

from wisp.jsontypes import JSON
from wisp.sdk.errors import MessageParseError
from wisp.sdk.types import (
    AssistantMessage,
    ContentBlock,
    ConversationResetMessage,
    DeferredToolUse,
    HookEventMessage,
    Message,
    MessageOrigin,
    MirrorErrorMessage,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

# A tuple, not a set: `in` must not hash the subtype, which may be any JSON value.
_HOOK_SUBTYPES = ("hook_started", "hook_response")


def parse_message(data: JSON) -> Message | None:
    """The message for one output frame, or None for a frame type that is not a message.

    Raises `MessageParseError` (with the frame as `data`) for a malformed frame.
    """
    if data.__class__ is not dict and not isinstance(data, dict):
        raise MessageParseError(
            f"Invalid message data type (expected dict, got {type(data).__name__})", data
        )
    kind = data.get("type")
    if kind == "system":
        subtype = data.get("subtype")
        # Hook lifecycle frames are recognised before the subtype is required.
        if subtype in _HOOK_SUBTYPES:
            return _hook_event(data, subtype)
    if not kind:
        raise MessageParseError("Message missing 'type' field", data)
    entry = _BY_TYPE.get(kind) if kind.__class__ is str else None
    if entry is None:
        return None  # a frame type this SDK does not know: skipped
    parse, what = entry
    try:
        return parse(data)
    except KeyError as missing:
        raise MessageParseError(f"Missing required field in {what}: {missing}", data) from missing
    except (TypeError, AttributeError) as wrong:
        # A list or a string where the frame needs a dict, and the like.
        raise MessageParseError(f"Malformed {what}: {wrong}", data) from wrong


def _origin(data: JSON) -> MessageOrigin | None:
    # Passed through whole (with keys this SDK does not model) when it has a string kind.
    origin = data.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("kind"), str):
        return cast(MessageOrigin, origin)
    return None


def _not_a_dict(block: object, data: JSON) -> MessageParseError:
    return MessageParseError(
        f"Invalid content block (expected dict, got {type(block).__name__})", data
    )


def _user(data: JSON) -> UserMessage:
    content = data["message"]["content"]
    if isinstance(content, list):
        blocks: list[ContentBlock] = []
        for block in content:
            if not isinstance(block, dict):
                raise _not_a_dict(block, data)
            kind = block["type"]
            if kind == "text":
                blocks.append(TextBlock(block["text"]))
            elif kind == "tool_result":
                blocks.append(
                    ToolResultBlock(
                        block["tool_use_id"], block.get("content"), block.get("is_error")
                    )
                )
            elif kind == "tool_use":
                blocks.append(ToolUseBlock(block["id"], block["name"], block["input"]))
            # Other kinds (images, documents, ...) are not kept in user messages.
        content = blocks
    return UserMessage(
        content=content,
        uuid=data.get("uuid"),
        parent_tool_use_id=data.get("parent_tool_use_id"),
        tool_use_result=data.get("tool_use_result"),
        origin=_origin(data),
    )


def _assistant(data: JSON) -> AssistantMessage:
    message = data["message"]
    content = message["content"]
    if not isinstance(content, list):
        raise MessageParseError(
            f"Invalid assistant content (expected list, got {type(content).__name__})", data
        )
    blocks: list[ContentBlock] = []
    for block in content:
        if not isinstance(block, dict):
            raise _not_a_dict(block, data)
        kind = block["type"]
        if kind == "text":
            blocks.append(TextBlock(block["text"]))
        elif kind == "tool_use":
            blocks.append(ToolUseBlock(block["id"], block["name"], block["input"]))
        elif kind == "thinking":
            blocks.append(ThinkingBlock(block["thinking"], block["signature"]))
        elif kind == "tool_result":
            blocks.append(
                ToolResultBlock(block["tool_use_id"], block.get("content"), block.get("is_error"))
            )
        elif kind == "server_tool_use":
            blocks.append(ServerToolUseBlock(block["id"], block["name"], block["input"]))
        elif kind == "advisor_tool_result":
            blocks.append(ServerToolResultBlock(block["tool_use_id"], block["content"]))
        # Other kinds (redacted_thinking, web_search_tool_result, ...) are dropped.
    return AssistantMessage(
        content=blocks,
        model=message["model"],
        parent_tool_use_id=data.get("parent_tool_use_id"),
        error=data.get("error"),
        usage=message.get("usage"),
        message_id=message.get("id"),
        stop_reason=message.get("stop_reason"),
        session_id=data.get("session_id"),
        uuid=data.get("uuid"),
        user_message_uuid=data.get("user_message_uuid"),
        user_message_uuids=data.get("user_message_uuids"),
    )


def _hook_event(data: JSON, subtype: str) -> HookEventMessage:
    name = data.get("hook_event") or data.get("hook_name") or data.get("hook_event_name") or ""
    return HookEventMessage(
        subtype=subtype,
        data=data,
        hook_event_name=name,
        session_id=data.get("session_id"),
        uuid=data.get("uuid"),
    )


def _task_started(data: JSON, subtype: str) -> SystemMessage:
    return TaskStartedMessage(
        subtype=subtype,
        data=data,
        task_id=data["task_id"],
        description=data["description"],
        uuid=data["uuid"],
        session_id=data["session_id"],
        tool_use_id=data.get("tool_use_id"),
        task_type=data.get("task_type"),
    )


def _task_progress(data: JSON, subtype: str) -> SystemMessage:
    return TaskProgressMessage(
        subtype=subtype,
        data=data,
        task_id=data["task_id"],
        description=data["description"],
        usage=data["usage"],
        uuid=data["uuid"],
        session_id=data["session_id"],
        tool_use_id=data.get("tool_use_id"),
        last_tool_name=data.get("last_tool_name"),
    )


def _task_notification(data: JSON, subtype: str) -> SystemMessage:
    return TaskNotificationMessage(
        subtype=subtype,
        data=data,
        task_id=data["task_id"],
        status=data["status"],
        output_file=data["output_file"],
        summary=data["summary"],
        uuid=data["uuid"],
        session_id=data["session_id"],
        tool_use_id=data.get("tool_use_id"),
        usage=data.get("usage"),
    )


def _task_updated(data: JSON, subtype: str) -> SystemMessage:
    # Never refused: a terminal status may arrive only here, so losing the frame would
    # leave a task looking alive. A patch that is not a dict counts as empty.
    patch = data.get("patch")
    if not isinstance(patch, dict):
        patch = {}
    return TaskUpdatedMessage(
        subtype=subtype,
        data=data,
        task_id=data.get("task_id", ""),
        patch=patch,
        status=patch.get("status"),
        session_id=data.get("session_id"),
        uuid=data.get("uuid"),
    )


def _mirror_error(data: JSON, subtype: str) -> SystemMessage:
    return MirrorErrorMessage(
        subtype=subtype, data=data, key=data.get("key"), error=data.get("error", "")
    )


_SYSTEM_SUBTYPES: dict[str, Callable[[JSON, str], SystemMessage]] = {
    "task_started": _task_started,
    "task_progress": _task_progress,
    "task_notification": _task_notification,
    "task_updated": _task_updated,
    "mirror_error": _mirror_error,
}


def _system(data: JSON) -> SystemMessage:
    subtype = data["subtype"]
    special = _SYSTEM_SUBTYPES.get(subtype) if subtype.__class__ is str else None
    if special is not None:
        return special(data, subtype)
    return SystemMessage(subtype, data)


def _result(data: JSON) -> ResultMessage:
    # Required fields first, in the official order, so the same missing key is named.
    subtype = data["subtype"]
    duration_ms = data["duration_ms"]
    duration_api_ms = data["duration_api_ms"]
    is_error = data["is_error"]
    num_turns = data["num_turns"]
    session_id = data["session_id"]
    deferred = data.get("deferred_tool_use")
    return ResultMessage(
        subtype=subtype,
        duration_ms=duration_ms,
        duration_api_ms=duration_api_ms,
        is_error=is_error,
        num_turns=num_turns,
        session_id=session_id,
        stop_reason=data.get("stop_reason"),
        total_cost_usd=data.get("total_cost_usd"),
        usage=data.get("usage"),
        result=data.get("result"),
        structured_output=data.get("structured_output"),
        model_usage=data.get("modelUsage"),
        permission_denials=data.get("permission_denials"),
        # Any falsy value (absent, null, {}) means no deferred call.
        deferred_tool_use=(
            DeferredToolUse(deferred["id"], deferred["name"], deferred["input"])
            if deferred
            else None
        ),
        errors=data.get("errors"),
        api_error_status=data.get("api_error_status"),
        uuid=data.get("uuid"),
        terminal_reason=data.get("terminal_reason"),
        origin=_origin(data),
        user_message_uuid=data.get("user_message_uuid"),
        user_message_uuids=data.get("user_message_uuids"),
    )


def _stream_event(data: JSON) -> StreamEvent:
    return StreamEvent(
        data["uuid"],
        data["session_id"],
        data["event"],
        data.get("parent_tool_use_id"),
        data.get("user_message_uuid"),
        data.get("user_message_uuids"),
    )


def _rate_limit_event(data: JSON) -> RateLimitEvent:
    info = data["rate_limit_info"]
    return RateLimitEvent(
        rate_limit_info=RateLimitInfo(
            status=info["status"],
            resets_at=info.get("resetsAt"),
            rate_limit_type=info.get("rateLimitType"),
            utilization=info.get("utilization"),
            overage_status=info.get("overageStatus"),
            overage_resets_at=info.get("overageResetsAt"),
            overage_disabled_reason=info.get("overageDisabledReason"),
            raw=info,
        ),
        uuid=data["uuid"],
        session_id=data["session_id"],
    )


def _conversation_reset(data: JSON) -> ConversationResetMessage:
    return ConversationResetMessage(
        new_conversation_id=data["new_conversation_id"],
        uuid=data["uuid"],
        session_id=data["session_id"],
    )


# Frame type -> (parser, how a missing field's message names the frame).
_BY_TYPE: dict[str, tuple[Callable[[JSON], Message], str]] = {
    "stream_event": (_stream_event, "stream_event message"),
    "assistant": (_assistant, "assistant message"),
    "user": (_user, "user message"),
    "system": (_system, "system message"),
    "result": (_result, "result message"),
    "rate_limit_event": (_rate_limit_event, "rate_limit_event message"),
    "conversation_reset": (_conversation_reset, "conversation_reset message"),
}
