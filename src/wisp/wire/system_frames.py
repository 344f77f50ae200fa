"""Frames of single engine events that need more than a line to build (`StreamJson`
picks the event; these say what its frame holds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.stamps import new_uuid
from wisp.wire import frames

if TYPE_CHECKING:
    from wisp.engine.events import (
        ConversationReset,
        ElicitationComplete,
        LocalCommandOutput,
        Refused,
        StopHookSummary,
        ThinkingProgress,
        ToolProgress,
    )



def progress_frame(event: ToolProgress | ThinkingProgress | ElicitationComplete,
                   session_id: str, parent: str | None) -> JSON:
    """A tool call still running (`tool_progress`), thinking streamed so far
    (`system/thinking_tokens`, as the reference sends it whatever the flags), or a
    URL-mode elicitation its MCP server says is done (`system/elicitation_complete`)."""
    from wisp.engine.events import ElicitationComplete, ThinkingProgress

    if isinstance(event, ElicitationComplete):
        return frames.system("elicitation_complete", session_id,
                             mcp_server_name=event.server, elicitation_id=event.elicitation_id)

    if isinstance(event, ThinkingProgress):
        return frames.system("thinking_tokens", session_id, estimated_tokens=event.estimated,
                             estimated_tokens_delta=event.delta)
    return {"type": "tool_progress", "tool_use_id": event.tool_use_id,
            "tool_name": event.tool_name, "parent_tool_use_id": parent,
            "elapsed_time_seconds": event.elapsed_s, "heartbeat": True,
            "uuid": new_uuid(), "session_id": session_id}


def refusal_frame(event: Refused, session_id: str, parent: str | None) -> JSON:
    """The reference's frames around a refusal (`wisp.engine.refusal`): the synthetic note
    before a retry, `system/model_refusal_fallback` when another model takes over (after
    the refused preview is retracted), `system/model_refusal_no_fallback` at the end."""
    facts = event.facts
    if event.step == "retry":
        return frames.user([{"type": "text", "text": facts["text"]}], session_id=session_id,
                           parent_tool_use_id=parent, isSynthetic=True,
                           refused_message_id=facts["refused_message_id"], refusal_retry=True)
    reported: JSON = {"api_refusal_category": facts.get("category"),
                      "api_refusal_explanation": facts.get("explanation"),
                      "refused_user_message_uuid": facts.get("prompt_uuid")}
    if event.step == "final":
        return frames.system("model_refusal_no_fallback", session_id,
                             original_model=facts["model"], request_id=facts["request_id"],
                             **reported, content="")
    return frames.system("model_refusal_fallback", session_id, trigger="refusal",
                         direction="retry", scope=facts["scope"], original_model=facts["model"],
                         fallback_model=facts["fallback"], request_id=facts["request_id"],
                         retracted_message_uuids=facts["retracted"], **reported,
                         content=facts["content"], level="warning")


def stop_hook_summary(event: StopHookSummary, session_id: str) -> JSON:
    """`system/stop_hook_summary`, in the reference's schema (seed 000)."""
    fields: JSON = {"hook_count": len(event.infos), "hook_infos": event.infos,
                    "hook_errors": event.errors, "hook_additional_context": event.context,
                    "prevented_continuation": event.prevented,
                    "has_output": bool(event.errors or event.context),
                    "level": "warning" if event.errors else "info",
                    "hook_label": event.event, "total_duration_ms": event.duration_ms}
    if event.stop_reason is not None:
        fields["stop_reason"] = event.stop_reason
    return frames.system("stop_hook_summary", session_id, **fields)


def conversation_reset(event: ConversationReset, session_id: str) -> JSON:
    """/clear's frame, with the session id it ends (the next frames carry the new one). As
    in the reference, `new_conversation_id` (also the frame's uuid) is an identifier of its
    own, not the new session id."""
    conversation = new_uuid()
    frame: JSON = {"type": "conversation_reset", "new_conversation_id": conversation,
                   "uuid": conversation, "trigger": "clear"}
    if event.user_message_uuid is not None:
        frame["user_message_uuid"] = event.user_message_uuid
    return {**frame, "timestamp": frames.iso_now(), "session_id": session_id}


def local_command_output(event: LocalCommandOutput, session_id: str) -> JSON:
    """A built-in command's output as the reference shows it: a replayed user message of
    its stdout, or a synthetic assistant message of its error."""
    if not event.failed:
        return frames.user(f"<local-command-stdout>{event.text}</local-command-stdout>",
                           session_id=session_id, isReplay=True)
    synthetic = {"id": new_uuid(), "model": "<synthetic>", "usage": {}}
    return frames.assistant(
        synthetic, [{"type": "text", "text": event.text}], session_id=session_id,
        request_id=None,
        local_command_source=f"<local-command-stderr>{event.text}</local-command-stderr>",
        local_command_run={"command": event.command, "args": event.args},
        local_command_outcome={"kind": "failed"})
