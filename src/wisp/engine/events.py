"""What the engine tells the outside world: a closed union of small immutable events.

The engine emits only these, through an `EventSink`; projections at the edge turn them
into stream-json frames, text, a transcript or widgets. Events carry facts, never wire
shapes: no session id, no `parent_tool_use_id` (a subagent's events arrive wrapped in
`TaskProgress`), and no frame uuid except the identity of a message the transcript also
records (`uuid` on `BlockShown`/`ToolResultReady`), so a client can name it later.

Each is a frozen `__slots__` record (`wisp.engine.event_record.EventRecord`: why not
dataclasses) with a `Literal` tag in `kind`. The task events (subagents, background
commands) live in `wisp.engine.task_events` and are re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from wisp.engine.event_record import EventRecord
from wisp.engine.task_events import (
    BackgroundTasksChanged,
    TaskFinished,
    TaskNotified,
    TaskProgress,
    TaskStarted,
    TaskStep,
    TaskUpdated,
)
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from dataclasses import KW_ONLY  # for the type checker only: too slow to import here

    from wisp.engine.outcome import Outcome
    from wisp.engine.usage import UsageLedger

__all__ = ["ApiErrorShown", "ApiRetry", "BackgroundTasksChanged", "BlockShown",
           "Compacted", "CompactionFailed", "ConversationReset", "ElicitationComplete",
           "Event", "EventSink", "HookEvent", "HookPhase", "Informational", "Interrupted",
           "LocalCommandOutput", "ModelFallback", "PermissionDenied",
           "Refused", "RunFinished", "RunStats", "StatusChanged", "StopHookSummary",
           "StreamDelta", "TaskFinished", "TaskNotified", "TaskProgress", "TaskStarted",
           "TaskStep", "TaskUpdated", "ThinkingProgress", "ToolProgress",
           "ToolResultReady", "TurnDuration"]

_set = object.__setattr__  # `Informational` writes its own constructor


class BlockShown(EventRecord):
    """Content blocks of an assistant message, complete (one per block, as it ends) or
    partial (`aborted`: cut by an interrupt). `message` is the API message around them."""

    kind: ClassVar[Literal["block_shown"]] = "block_shown"
    message: JSON
    blocks: list[JSON]
    request_id: str | None
    uuid: str
    aborted: bool = False


class StreamDelta(EventRecord):
    """One raw stream event of the model's reply; `ttft_ms` on the first of a request."""

    kind: ClassVar[Literal["stream_delta"]] = "stream_delta"
    event: JSON
    message_id: str | None
    ttft_ms: int | None = None


class ToolResultReady(EventRecord):
    """A tool_result for the model (`block`), what clients see of it (`data`), and how it
    was decided (`meta`)."""

    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    block: JSON
    data: Any
    meta: JSON
    uuid: str


class Interrupted(EventRecord):
    """The interruption note that closes an interrupted run."""

    kind: ClassVar[Literal["interrupted"]] = "interrupted"
    text: str


class ApiErrorShown(EventRecord):
    """The model call failed for good: the error as the assistant's last word. `error`
    is its kind as the SDKs type it ("authentication_failed", "unknown")."""

    kind: ClassVar[Literal["api_error"]] = "api_error"
    text: str
    status: int | None
    error: str = 'unknown'


class ApiRetry(EventRecord):
    kind: ClassVar[Literal["api_retry"]] = "api_retry"
    attempt: int
    max_retries: int
    _: KW_ONLY
    delay_ms: int
    status: int | None
    error: str
    message: str


class ModelFallback(EventRecord):
    kind: ClassVar[Literal["model_fallback"]] = "model_fallback"
    trigger: str
    original: str
    fallback: str
    reason: str


class PermissionDenied(EventRecord):
    kind: ClassVar[Literal["permission_denied"]] = "permission_denied"
    tool_name: str
    tool_use_id: Any
    message: str


class Compacted(EventRecord):
    """The history became a summary. `logical_parent` is the last message before it (the
    transcript's `logicalParentUuid`); `summary`, when set, is shown as a synthetic user
    message with `summary_uuid` (the transcript line's)."""

    kind: ClassVar[Literal["compacted"]] = "compacted"
    trigger: str
    pre_tokens: int
    _: KW_ONLY
    duration_ms: int | None = None
    logical_parent: str | None = None
    summary: str | None = None
    summary_uuid: str | None = None


class CompactionFailed(EventRecord):
    kind: ClassVar[Literal["compaction_failed"]] = "compaction_failed"
    error: str


class StatusChanged(EventRecord):
    """`status` is what the session is doing ("requesting", "compacting", or None for
    nothing special); `permission_mode` is set when that is what changed, `compact_result`
    ("success" or "failed") when a compaction just ended."""

    kind: ClassVar[Literal["status"]] = "status"
    status: str | None
    permission_mode: str | None = None
    _: KW_ONLY
    compact_result: str | None = None


class ConversationReset(EventRecord):
    """/clear: a fresh conversation under `new_session_id` from now on."""

    kind: ClassVar[Literal["conversation_reset"]] = "conversation_reset"
    new_session_id: str
    user_message_uuid: str | None


class LocalCommandOutput(EventRecord):
    """What a built-in slash command (`/compact`) reports instead of a model reply;
    `failed` when it could not do its work (`text` says why)."""

    kind: ClassVar[Literal["local_command_output"]] = "local_command_output"
    command: str
    args: str
    text: str
    failed: bool = False


class Informational(EventRecord):
    """A line for the user, not the model: a hook's `systemMessage` ("notice"), or why a
    hook stopped the prompt ("warning"). `extra` carries the reference's fields for the
    latter (`prevent_continuation`, `prompt_submit_outcome`)."""

    kind: ClassVar[Literal["informational"]] = "informational"
    content: str
    level: str
    extra: JSON

    def __init__(self, content: str, level: str = "notice", extra: JSON | None = None) -> None:
        _set(self, "content", content)
        _set(self, "level", level)
        _set(self, "extra", extra or {})


HookPhase = Literal["hook_started", "hook_progress", "hook_response"]


class HookEvent(EventRecord):
    kind: ClassVar[Literal["hook"]] = "hook"
    phase: HookPhase
    fields: JSON


class RunStats(EventRecord):  # not an event itself: a RunFinished field
    """Figures of one finished run. `run_usage` covers this run; `session_usage` the whole
    session so far (both are snapshots' owners: read them when the event arrives)."""

    _: KW_ONLY
    duration_ms: int
    api_ms: int
    num_turns: int
    stop_reason: str | None
    denials: list[JSON]
    run_usage: UsageLedger
    session_usage: UsageLedger


class ThinkingProgress(EventRecord):
    """Thinking streamed so far in this message, estimated in tokens (a delta's length in
    characters over four, rounded up, as the reference estimates), and the latest delta's
    share: a UI can show progress while the model thinks."""

    kind: ClassVar[Literal["thinking_progress"]] = "thinking_progress"
    estimated: int
    delta: int


class ToolProgress(EventRecord):
    """A tool call still running (sent every few seconds while it runs, so a UI can show
    it is alive)."""

    kind: ClassVar[Literal["tool_progress"]] = "tool_progress"
    tool_use_id: str
    tool_name: str
    elapsed_s: int


class TurnDuration(EventRecord):
    """How long a prompt's turn took, how many messages the conversation has, and how much
    background work it left running."""

    kind: ClassVar[Literal["turn_duration"]] = "turn_duration"
    duration_ms: int
    message_count: int
    pending_agents: int


class StopHookSummary(EventRecord):
    """What the Stop (or SubagentStop) hooks did at a turn's end: which ran and how long,
    their errors and feedback, and whether one kept the turn going or stopped it."""

    kind: ClassVar[Literal["stop_hook_summary"]] = "stop_hook_summary"
    event: str
    infos: list[JSON]
    errors: list[str]
    context: list[str]
    _: KW_ONLY
    prevented: bool
    stop_reason: str | None
    duration_ms: int


class Refused(EventRecord):
    """The model refused (`wisp.engine.refusal`). `step` says what follows: "retry" (the
    same model again, after a note), "fallback" (another model, the refused message
    retracted) or "final" (the run ends); `facts` what is reported of it."""

    kind: ClassVar[Literal["refused"]] = "refused"
    step: Literal["retry", "fallback", "final"]
    facts: JSON


class ElicitationComplete(EventRecord):
    """An MCP server says a URL-mode elicitation the user was sent to is done."""

    kind: ClassVar[Literal["elicitation_complete"]] = "elicitation_complete"
    server: str
    elicitation_id: str


class RunFinished(EventRecord):
    """The end of one prompt's run, with how it ended and what it cost. `local_command`
    names the built-in slash command that ran instead of the model (`compact`)."""

    kind: ClassVar[Literal["run_finished"]] = "run_finished"
    outcome: Outcome
    stats: RunStats
    local_command: str | None = None
    _: KW_ONLY
    origin: JSON | None = None  # what started a run no user prompted (a task's notification)


Event = (BlockShown | StreamDelta | ToolResultReady | Interrupted | ApiErrorShown | ApiRetry
         | ModelFallback | PermissionDenied | Compacted | CompactionFailed | StatusChanged
         | ConversationReset | LocalCommandOutput | HookEvent | Informational | TaskStarted
         | TaskProgress
         | TaskFinished | TaskStep | TaskUpdated | TaskNotified | BackgroundTasksChanged
         | ToolProgress | ThinkingProgress | TurnDuration | StopHookSummary | Refused
         | ElicitationComplete | RunFinished)


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...
