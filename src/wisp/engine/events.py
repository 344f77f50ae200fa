"""What the engine tells the outside world: a closed union of small immutable events.

The engine emits only these, through an `EventSink`; projections at the edge turn them
into stream-json frames, text, a transcript or widgets. Events carry facts, never wire
shapes: no session id, no `parent_tool_use_id` (a subagent's events arrive wrapped in
`TaskProgress`), and no frame uuid except the identity of a message the transcript also
records (`uuid` on `BlockShown`/`ToolResultReady`), so a client can name it later.

Plain `__slots__` classes rather than dataclasses or NamedTuples: these are defined at
start-up and created on the hot path (one per stream delta), and a dataclass costs about
a hundred times more to define. Each has a `Literal` tag in `kind`; assigning to a field
raises, so an event is frozen once built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.engine.usage import UsageLedger

JSON = dict[str, Any]
_set = object.__setattr__


class _Event:
    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _names(self) -> tuple[str, ...]:
        return type(self).__slots__

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._names())

    __hash__ = None  # type: ignore[assignment]  # fields hold dicts


class BlockShown(_Event):
    """Content blocks of an assistant message, complete (one per block, as it ends) or
    partial (`aborted`: cut by an interrupt). `message` is the API message around them."""

    __slots__ = ("aborted", "blocks", "message", "request_id", "uuid")
    kind: ClassVar[Literal["block_shown"]] = "block_shown"
    message: JSON
    blocks: list[JSON]
    request_id: str | None
    uuid: str
    aborted: bool

    def __init__(self, message: JSON, blocks: list[JSON], request_id: str | None, uuid: str,
                 aborted: bool = False) -> None:
        _set(self, "message", message)
        _set(self, "blocks", blocks)
        _set(self, "request_id", request_id)
        _set(self, "uuid", uuid)
        _set(self, "aborted", aborted)


class StreamDelta(_Event):
    """One raw stream event of the model's reply; `ttft_ms` on the first of a request."""

    __slots__ = ("event", "message_id", "ttft_ms")
    kind: ClassVar[Literal["stream_delta"]] = "stream_delta"
    event: JSON
    message_id: str | None
    ttft_ms: int | None

    def __init__(self, event: JSON, message_id: str | None, ttft_ms: int | None = None) -> None:
        _set(self, "event", event)
        _set(self, "message_id", message_id)
        _set(self, "ttft_ms", ttft_ms)


class ToolResultReady(_Event):
    """A tool_result for the model (`block`), what clients see of it (`data`), and how it
    was decided (`meta`)."""

    __slots__ = ("block", "data", "meta", "uuid")
    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    block: JSON
    data: Any
    meta: JSON
    uuid: str

    def __init__(self, block: JSON, data: Any, meta: JSON, uuid: str) -> None:
        _set(self, "block", block)
        _set(self, "data", data)
        _set(self, "meta", meta)
        _set(self, "uuid", uuid)


class Interrupted(_Event):
    """The interruption note that closes an interrupted run."""

    __slots__ = ("text",)
    kind: ClassVar[Literal["interrupted"]] = "interrupted"
    text: str

    def __init__(self, text: str) -> None:
        _set(self, "text", text)


class ApiErrorShown(_Event):
    """The model call failed for good: the error as the assistant's last word. `error`
    is its kind as the SDKs type it ("authentication_failed", "unknown")."""

    __slots__ = ("error", "status", "text")
    kind: ClassVar[Literal["api_error"]] = "api_error"
    text: str
    status: int | None
    error: str

    def __init__(self, text: str, status: int | None, error: str = "unknown") -> None:
        _set(self, "text", text)
        _set(self, "status", status)
        _set(self, "error", error)


class ApiRetry(_Event):
    __slots__ = ("attempt", "delay_ms", "error", "max_retries", "message", "status")
    kind: ClassVar[Literal["api_retry"]] = "api_retry"
    attempt: int
    max_retries: int
    delay_ms: int
    status: int | None
    error: str
    message: str

    def __init__(self, attempt: int, max_retries: int, *, delay_ms: int, status: int | None,
                 error: str, message: str) -> None:
        _set(self, "attempt", attempt)
        _set(self, "max_retries", max_retries)
        _set(self, "delay_ms", delay_ms)
        _set(self, "status", status)
        _set(self, "error", error)
        _set(self, "message", message)


class ModelFallback(_Event):
    __slots__ = ("fallback", "original", "reason", "trigger")
    kind: ClassVar[Literal["model_fallback"]] = "model_fallback"
    trigger: str
    original: str
    fallback: str
    reason: str

    def __init__(self, trigger: str, original: str, fallback: str, reason: str) -> None:
        _set(self, "trigger", trigger)
        _set(self, "original", original)
        _set(self, "fallback", fallback)
        _set(self, "reason", reason)


class PermissionDenied(_Event):
    __slots__ = ("message", "tool_name", "tool_use_id")
    kind: ClassVar[Literal["permission_denied"]] = "permission_denied"
    tool_name: str
    tool_use_id: Any
    message: str

    def __init__(self, tool_name: str, tool_use_id: Any, message: str) -> None:
        _set(self, "tool_name", tool_name)
        _set(self, "tool_use_id", tool_use_id)
        _set(self, "message", message)


class Compacted(_Event):
    """The history became a summary. `logical_parent` is the last message before it (the
    transcript's `logicalParentUuid`); `summary`, when set, is shown as a synthetic user
    message with `summary_uuid` (the transcript line's)."""

    __slots__ = ("duration_ms", "logical_parent", "pre_tokens", "summary", "summary_uuid",
                 "trigger")
    kind: ClassVar[Literal["compacted"]] = "compacted"
    trigger: str
    pre_tokens: int
    duration_ms: int | None
    logical_parent: str | None
    summary: str | None
    summary_uuid: str | None

    def __init__(self, trigger: str, pre_tokens: int, *, duration_ms: int | None = None,
                 logical_parent: str | None = None, summary: str | None = None,
                 summary_uuid: str | None = None) -> None:
        _set(self, "trigger", trigger)
        _set(self, "pre_tokens", pre_tokens)
        _set(self, "duration_ms", duration_ms)
        _set(self, "logical_parent", logical_parent)
        _set(self, "summary", summary)
        _set(self, "summary_uuid", summary_uuid)


class CompactionFailed(_Event):
    __slots__ = ("error",)
    kind: ClassVar[Literal["compaction_failed"]] = "compaction_failed"
    error: str

    def __init__(self, error: str) -> None:
        _set(self, "error", error)


class StatusChanged(_Event):
    """`status` is what the session is doing ("requesting", "compacting", or None for
    nothing special); `permission_mode` is set when that is what changed, `compact_result`
    ("success" or "failed") when a compaction just ended."""

    __slots__ = ("compact_result", "permission_mode", "status")
    kind: ClassVar[Literal["status"]] = "status"
    status: str | None
    permission_mode: str | None
    compact_result: str | None

    def __init__(self, status: str | None, permission_mode: str | None = None, *,
                 compact_result: str | None = None) -> None:
        _set(self, "status", status)
        _set(self, "permission_mode", permission_mode)
        _set(self, "compact_result", compact_result)


class ConversationReset(_Event):
    """/clear: a fresh conversation under `new_session_id` from now on."""

    __slots__ = ("new_session_id", "user_message_uuid")
    kind: ClassVar[Literal["conversation_reset"]] = "conversation_reset"
    new_session_id: str
    user_message_uuid: str | None

    def __init__(self, new_session_id: str, user_message_uuid: str | None) -> None:
        _set(self, "new_session_id", new_session_id)
        _set(self, "user_message_uuid", user_message_uuid)


class LocalCommandOutput(_Event):
    """What a built-in slash command (`/compact`) reports instead of a model reply;
    `failed` when it could not do its work (`text` says why)."""

    __slots__ = ("args", "command", "failed", "text")
    kind: ClassVar[Literal["local_command_output"]] = "local_command_output"
    command: str
    args: str
    text: str
    failed: bool

    def __init__(self, command: str, args: str, text: str, failed: bool = False) -> None:
        _set(self, "command", command)
        _set(self, "args", args)
        _set(self, "text", text)
        _set(self, "failed", failed)


class Informational(_Event):
    """A line for the user, not the model: a hook's `systemMessage` ("notice"), or why a
    hook stopped the prompt ("warning"). `extra` carries the reference's fields for the
    latter (`prevent_continuation`, `prompt_submit_outcome`)."""

    __slots__ = ("content", "extra", "level")
    kind: ClassVar[Literal["informational"]] = "informational"
    content: str
    level: str
    extra: JSON

    def __init__(self, content: str, level: str = "notice", extra: JSON | None = None) -> None:
        _set(self, "content", content)
        _set(self, "level", level)
        _set(self, "extra", extra or {})


HookPhase = Literal["hook_started", "hook_progress", "hook_response"]


class HookEvent(_Event):
    __slots__ = ("fields", "phase")
    kind: ClassVar[Literal["hook"]] = "hook"
    phase: HookPhase
    fields: JSON

    def __init__(self, phase: HookPhase, fields: JSON) -> None:
        _set(self, "phase", phase)
        _set(self, "fields", fields)


class TaskStarted(_Event):
    """A task started: a subagent (`task_type` "local_agent", `agent_type` its definition)
    or a background command ("local_bash", no `agent_type`), for the tool call
    `tool_use_id`. `task_id` names it from now on (stop_task, the later Task* events);
    `run_id` names this run of it. `prompt` is a subagent's brief."""

    __slots__ = ("agent_type", "backgrounded", "description", "prompt", "run_id", "task_id",
                 "task_type", "tool_use_id")
    kind: ClassVar[Literal["task_started"]] = "task_started"
    task_id: str
    agent_type: str
    description: str
    tool_use_id: str | None
    task_type: str
    backgrounded: bool
    prompt: str | None
    run_id: str | None

    def __init__(self, task_id: str, agent_type: str, description: str, *,
                 tool_use_id: str | None = None, task_type: str = "local_agent",
                 backgrounded: bool = False, prompt: str | None = None,
                 run_id: str | None = None) -> None:
        _set(self, "task_id", task_id)
        _set(self, "agent_type", agent_type)
        _set(self, "description", description)
        _set(self, "tool_use_id", tool_use_id)
        _set(self, "task_type", task_type)
        _set(self, "backgrounded", backgrounded)
        _set(self, "prompt", prompt)
        _set(self, "run_id", run_id)


class TaskStep(_Event):
    """A subagent is about to use a tool: what it is doing (`description`), with which
    tool, and its usage so far (`total_tokens`, `tool_uses`, `duration_ms`)."""

    __slots__ = ("description", "last_tool_name", "task_id", "usage")
    kind: ClassVar[Literal["task_step"]] = "task_step"
    task_id: str
    description: str
    last_tool_name: str
    usage: JSON

    def __init__(self, task_id: str, description: str, last_tool_name: str,
                 usage: JSON) -> None:
        _set(self, "task_id", task_id)
        _set(self, "description", description)
        _set(self, "last_tool_name", last_tool_name)
        _set(self, "usage", usage)


class TaskUpdated(_Event):
    """A task's state changed; `patch` holds what changed (`status`, `end_time`)."""

    __slots__ = ("patch", "task_id")
    kind: ClassVar[Literal["task_updated"]] = "task_updated"
    task_id: str
    patch: JSON

    def __init__(self, task_id: str, patch: JSON) -> None:
        _set(self, "task_id", task_id)
        _set(self, "patch", patch)


class TaskNotified(_Event):
    """A task ended (`status`: completed, failed or stopped): a one-line `summary` (a
    subagent's report when `report`), where its output is, and a subagent's `usage`."""

    __slots__ = ("output_file", "report", "status", "summary", "task_id", "usage")
    kind: ClassVar[Literal["task_notified"]] = "task_notified"
    task_id: str
    status: str
    summary: str
    output_file: str
    usage: JSON | None
    report: bool

    def __init__(self, task_id: str, status: str, summary: str, output_file: str, *,
                 usage: JSON | None = None, report: bool = False) -> None:
        _set(self, "task_id", task_id)
        _set(self, "status", status)
        _set(self, "summary", summary)
        _set(self, "output_file", output_file)
        _set(self, "usage", usage)
        _set(self, "report", report)


class BackgroundTasksChanged(_Event):
    """The tasks now running in the background, each as it started (in that order)."""

    __slots__ = ("tasks",)
    kind: ClassVar[Literal["background_tasks_changed"]] = "background_tasks_changed"
    tasks: tuple[TaskStarted, ...]

    def __init__(self, tasks: tuple[TaskStarted, ...]) -> None:
        _set(self, "tasks", tasks)


class TaskProgress(_Event):
    """Something a subagent's own run emitted; `task_id` here is the Task call's
    tool_use_id (its frames' `parent_tool_use_id`), not the task's own id."""

    __slots__ = ("event", "task_id")
    kind: ClassVar[Literal["task_progress"]] = "task_progress"
    task_id: str
    event: Event

    def __init__(self, task_id: str, event: Event) -> None:
        _set(self, "task_id", task_id)
        _set(self, "event", event)


class TaskFinished(_Event):
    __slots__ = ("outcome", "stats", "task_id")
    kind: ClassVar[Literal["task_finished"]] = "task_finished"
    task_id: str
    outcome: Outcome
    stats: RunStats

    def __init__(self, task_id: str, outcome: Outcome, stats: RunStats) -> None:
        _set(self, "task_id", task_id)
        _set(self, "outcome", outcome)
        _set(self, "stats", stats)


class RunStats(_Event):  # not an event itself: a RunFinished field
    """Figures of one finished run. `run_usage` covers this run; `session_usage` the whole
    session so far (both are snapshots' owners: read them when the event arrives)."""

    __slots__ = (
        "api_ms",
        "denials",
        "duration_ms",
        "num_turns",
        "run_usage",
        "session_usage",
        "stop_reason",
    )
    duration_ms: int
    api_ms: int
    num_turns: int
    stop_reason: str | None
    denials: list[JSON]
    run_usage: UsageLedger
    session_usage: UsageLedger

    def __init__(self, *, duration_ms: int, api_ms: int, num_turns: int,
                 stop_reason: str | None, denials: list[JSON], run_usage: UsageLedger,
                 session_usage: UsageLedger) -> None:
        _set(self, "duration_ms", duration_ms)
        _set(self, "api_ms", api_ms)
        _set(self, "num_turns", num_turns)
        _set(self, "stop_reason", stop_reason)
        _set(self, "denials", denials)
        _set(self, "run_usage", run_usage)
        _set(self, "session_usage", session_usage)


class ThinkingProgress(_Event):
    """Thinking streamed so far in this message, estimated in tokens (a delta's length in
    characters over four, rounded up, as the reference estimates), and the latest delta's
    share: a UI can show progress while the model thinks."""

    __slots__ = ("delta", "estimated")
    kind: ClassVar[Literal["thinking_progress"]] = "thinking_progress"
    estimated: int
    delta: int

    def __init__(self, estimated: int, delta: int) -> None:
        _set(self, "estimated", estimated)
        _set(self, "delta", delta)


class ToolProgress(_Event):
    """A tool call still running (sent every few seconds while it runs, so a UI can show
    it is alive)."""

    __slots__ = ("elapsed_s", "tool_name", "tool_use_id")
    kind: ClassVar[Literal["tool_progress"]] = "tool_progress"
    tool_use_id: str
    tool_name: str
    elapsed_s: int

    def __init__(self, tool_use_id: str, tool_name: str, elapsed_s: int) -> None:
        _set(self, "tool_use_id", tool_use_id)
        _set(self, "tool_name", tool_name)
        _set(self, "elapsed_s", elapsed_s)


class TurnDuration(_Event):
    """How long a prompt's turn took, how many messages the conversation has, and how much
    background work it left running."""

    __slots__ = ("duration_ms", "message_count", "pending_agents")
    kind: ClassVar[Literal["turn_duration"]] = "turn_duration"
    duration_ms: int
    message_count: int
    pending_agents: int

    def __init__(self, duration_ms: int, message_count: int, pending_agents: int) -> None:
        _set(self, "duration_ms", duration_ms)
        _set(self, "message_count", message_count)
        _set(self, "pending_agents", pending_agents)


class StopHookSummary(_Event):
    """What the Stop (or SubagentStop) hooks did at a turn's end: which ran and how long,
    their errors and feedback, and whether one kept the turn going or stopped it."""

    __slots__ = ("context", "duration_ms", "errors", "event", "infos", "prevented",
                 "stop_reason")
    kind: ClassVar[Literal["stop_hook_summary"]] = "stop_hook_summary"
    event: str
    infos: list[JSON]
    errors: list[str]
    context: list[str]
    prevented: bool
    stop_reason: str | None
    duration_ms: int

    def __init__(self, event: str, infos: list[JSON], errors: list[str], context: list[str],
                 *, prevented: bool, stop_reason: str | None, duration_ms: int) -> None:
        _set(self, "event", event)
        _set(self, "infos", infos)
        _set(self, "errors", errors)
        _set(self, "context", context)
        _set(self, "prevented", prevented)
        _set(self, "stop_reason", stop_reason)
        _set(self, "duration_ms", duration_ms)


class Refused(_Event):
    """The model refused (`wisp.engine.refusal`). `step` says what follows: "retry" (the
    same model again, after a note), "fallback" (another model, the refused message
    retracted) or "final" (the run ends); `facts` what is reported of it."""

    __slots__ = ("facts", "step")
    kind: ClassVar[Literal["refused"]] = "refused"
    step: Literal["retry", "fallback", "final"]
    facts: JSON

    def __init__(self, step: Literal["retry", "fallback", "final"], facts: JSON) -> None:
        _set(self, "step", step)
        _set(self, "facts", facts)


class ElicitationComplete(_Event):
    """An MCP server says a URL-mode elicitation the user was sent to is done."""

    __slots__ = ("elicitation_id", "server")
    kind: ClassVar[Literal["elicitation_complete"]] = "elicitation_complete"
    server: str
    elicitation_id: str

    def __init__(self, server: str, elicitation_id: str) -> None:
        _set(self, "server", server)
        _set(self, "elicitation_id", elicitation_id)


class RunFinished(_Event):
    """The end of one prompt's run, with how it ended and what it cost. `local_command`
    names the built-in slash command that ran instead of the model (`compact`)."""

    __slots__ = ("local_command", "origin", "outcome", "stats")
    kind: ClassVar[Literal["run_finished"]] = "run_finished"
    outcome: Outcome
    stats: RunStats
    local_command: str | None
    origin: JSON | None  # what started a run no user prompted (a task's notification)

    def __init__(self, outcome: Outcome, stats: RunStats,
                 local_command: str | None = None, *, origin: JSON | None = None) -> None:
        _set(self, "outcome", outcome)
        _set(self, "stats", stats)
        _set(self, "local_command", local_command)
        _set(self, "origin", origin)


Event = (BlockShown | StreamDelta | ToolResultReady | Interrupted | ApiErrorShown | ApiRetry
         | ModelFallback | PermissionDenied | Compacted | CompactionFailed | StatusChanged
         | ConversationReset | LocalCommandOutput | HookEvent | Informational | TaskStarted
         | TaskProgress
         | TaskFinished | TaskStep | TaskUpdated | TaskNotified | BackgroundTasksChanged
         | ToolProgress | ThinkingProgress | TurnDuration | StopHookSummary | Refused
         | ElicitationComplete | RunFinished)


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...
