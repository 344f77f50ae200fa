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
    """The model call failed for good: the error as the assistant's last word."""

    __slots__ = ("status", "text")
    kind: ClassVar[Literal["api_error"]] = "api_error"
    text: str
    status: int | None

    def __init__(self, text: str, status: int | None) -> None:
        _set(self, "text", text)
        _set(self, "status", status)


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
    __slots__ = ("pre_tokens", "trigger")
    kind: ClassVar[Literal["compacted"]] = "compacted"
    trigger: str
    pre_tokens: int

    def __init__(self, trigger: str, pre_tokens: int) -> None:
        _set(self, "trigger", trigger)
        _set(self, "pre_tokens", pre_tokens)


class CompactionFailed(_Event):
    __slots__ = ("error",)
    kind: ClassVar[Literal["compaction_failed"]] = "compaction_failed"
    error: str

    def __init__(self, error: str) -> None:
        _set(self, "error", error)


class StatusChanged(_Event):
    """`status` is what the session is doing ("requesting", or None for nothing special);
    `permission_mode` is set when that is what changed."""

    __slots__ = ("permission_mode", "status")
    kind: ClassVar[Literal["status"]] = "status"
    status: str | None
    permission_mode: str | None

    def __init__(self, status: str | None, permission_mode: str | None = None) -> None:
        _set(self, "status", status)
        _set(self, "permission_mode", permission_mode)


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
    """A subagent started, on behalf of the Task call `task_id`."""

    __slots__ = ("agent_type", "description", "task_id")
    kind: ClassVar[Literal["task_started"]] = "task_started"
    task_id: str
    agent_type: str
    description: str

    def __init__(self, task_id: str, agent_type: str, description: str) -> None:
        _set(self, "task_id", task_id)
        _set(self, "agent_type", agent_type)
        _set(self, "description", description)


class TaskProgress(_Event):
    """Something a subagent's own run emitted."""

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


class RunFinished(_Event):
    """The end of one prompt's run, with how it ended and what it cost."""

    __slots__ = ("outcome", "stats")
    kind: ClassVar[Literal["run_finished"]] = "run_finished"
    outcome: Outcome
    stats: RunStats

    def __init__(self, outcome: Outcome, stats: RunStats) -> None:
        _set(self, "outcome", outcome)
        _set(self, "stats", stats)


Event = (BlockShown | StreamDelta | ToolResultReady | Interrupted | ApiErrorShown | ApiRetry
         | ModelFallback | PermissionDenied | Compacted | CompactionFailed | StatusChanged
         | HookEvent | TaskStarted | TaskProgress | TaskFinished | RunFinished)


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class TaskSink:
    """What a subagent's run emits into: each event goes to the parent's sink wrapped in
    `TaskProgress`, so the projection knows whose it is."""

    __slots__ = ("parent", "task_id")

    def __init__(self, parent: EventSink, task_id: str) -> None:
        self.parent = parent
        self.task_id = task_id

    def emit(self, event: Event) -> None:
        self.parent.emit(TaskProgress(self.task_id, event))


class EventList:
    """Keeps every event (tests, and front ends that render after the run)."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
