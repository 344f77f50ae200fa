"""What the engine tells the outside world: a closed union of small immutable events.

The engine emits only these, through an `EventSink`; projections at the edge turn them
into stream-json frames, text, a transcript or widgets. Events carry facts, never wire
shapes: no session id, no `parent_tool_use_id` (a subagent's events arrive wrapped in
`TaskProgress`), and no frame uuid except the identity of a message the transcript also
records (`uuid` on `BlockShown`/`ToolResultReady`), so a client can name it later.

Plain `__slots__` classes rather than dataclasses or NamedTuples: these are defined at
start-up and created on the hot path (one per stream delta), and a dataclass costs about
a hundred times more to define. Each class lists its fields once, as annotations (with
defaults, and `_: KW_ONLY` before the keyword-only ones); `_Fields` builds its slots and
constructor from them. Each has a `Literal` tag in `kind`; assigning to a field raises,
so an event is frozen once built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, dataclass_transform

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from dataclasses import KW_ONLY  # for the type checker only: too slow to import here

    from wisp.engine.outcome import Outcome
    from wisp.engine.usage import UsageLedger

_set = object.__setattr__


@dataclass_transform(eq_default=True, frozen_default=True)
class _Fields(type):
    """Gives a class `__slots__` (sorted, as `repr` lists them) and, unless it writes its
    own, an `__init__` taking its fields in order, from its annotations (strings here, as
    `from __future__ import annotations` leaves them). A field's class-level default
    becomes the parameter's (slots cannot coexist with a class attribute of that name)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _Fields:
        notes: dict[str, str] = namespace.get("__annotations__", {})
        fields = [f for f, note in notes.items() if not _skipped(note)]
        defaults = {f: namespace.pop(f) for f in fields if f in namespace}
        namespace["__slots__"] = tuple(sorted(fields))
        cls = super().__new__(mcs, name, bases, namespace)
        if fields and "__init__" not in namespace:
            cls.__init__ = _deferred(cls, notes, defaults)  # type: ignore[misc]
        return cls


def _skipped(note: str) -> bool:
    return note.startswith("ClassVar") or note == "KW_ONLY"


def _deferred(cls: type, notes: dict[str, str], defaults: dict[str, Any]) -> Any:
    """A first `__init__` that generates the real one, installs it and runs it: most
    classes are never built in a run, so start-up does not pay to compile theirs."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        init = _constructor(f"{cls.__qualname__}.__init__", notes, defaults)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)

    return __init__


def _constructor(qualname: str, notes: dict[str, str], defaults: dict[str, Any]) -> Any:
    """`__init__` as plain code (generated once per class, as dataclasses do), so building
    an event costs no more than the hand-written constructor did."""
    params: list[str] = []
    body: list[str] = []
    for field, note in notes.items():
        if note == "KW_ONLY":
            params.append("*")
        elif not _skipped(note):
            params.append(f"{field}=_d[{field!r}]" if field in defaults else field)
            body.append(f"_set(self, {field!r}, {field})")
    scope: dict[str, Any] = {"_set": _set, "_d": defaults}
    exec(f"def __init__(self, {', '.join(params)}):\n " + "\n ".join(body), scope)
    init = scope["__init__"]
    init.__qualname__ = qualname
    return init


class _Event(metaclass=_Fields):
    __slots__: ClassVar[tuple[str, ...]] = ()

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

    kind: ClassVar[Literal["block_shown"]] = "block_shown"
    message: JSON
    blocks: list[JSON]
    request_id: str | None
    uuid: str
    aborted: bool = False


class StreamDelta(_Event):
    """One raw stream event of the model's reply; `ttft_ms` on the first of a request."""

    kind: ClassVar[Literal["stream_delta"]] = "stream_delta"
    event: JSON
    message_id: str | None
    ttft_ms: int | None = None


class ToolResultReady(_Event):
    """A tool_result for the model (`block`), what clients see of it (`data`), and how it
    was decided (`meta`)."""

    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    block: JSON
    data: Any
    meta: JSON
    uuid: str


class Interrupted(_Event):
    """The interruption note that closes an interrupted run."""

    kind: ClassVar[Literal["interrupted"]] = "interrupted"
    text: str


class ApiErrorShown(_Event):
    """The model call failed for good: the error as the assistant's last word. `error`
    is its kind as the SDKs type it ("authentication_failed", "unknown")."""

    kind: ClassVar[Literal["api_error"]] = "api_error"
    text: str
    status: int | None
    error: str = 'unknown'


class ApiRetry(_Event):
    kind: ClassVar[Literal["api_retry"]] = "api_retry"
    attempt: int
    max_retries: int
    _: KW_ONLY
    delay_ms: int
    status: int | None
    error: str
    message: str


class ModelFallback(_Event):
    kind: ClassVar[Literal["model_fallback"]] = "model_fallback"
    trigger: str
    original: str
    fallback: str
    reason: str


class PermissionDenied(_Event):
    kind: ClassVar[Literal["permission_denied"]] = "permission_denied"
    tool_name: str
    tool_use_id: Any
    message: str


class Compacted(_Event):
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


class CompactionFailed(_Event):
    kind: ClassVar[Literal["compaction_failed"]] = "compaction_failed"
    error: str


class StatusChanged(_Event):
    """`status` is what the session is doing ("requesting", "compacting", or None for
    nothing special); `permission_mode` is set when that is what changed, `compact_result`
    ("success" or "failed") when a compaction just ended."""

    kind: ClassVar[Literal["status"]] = "status"
    status: str | None
    permission_mode: str | None = None
    _: KW_ONLY
    compact_result: str | None = None


class ConversationReset(_Event):
    """/clear: a fresh conversation under `new_session_id` from now on."""

    kind: ClassVar[Literal["conversation_reset"]] = "conversation_reset"
    new_session_id: str
    user_message_uuid: str | None


class LocalCommandOutput(_Event):
    """What a built-in slash command (`/compact`) reports instead of a model reply;
    `failed` when it could not do its work (`text` says why)."""

    kind: ClassVar[Literal["local_command_output"]] = "local_command_output"
    command: str
    args: str
    text: str
    failed: bool = False


class Informational(_Event):
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


class HookEvent(_Event):
    kind: ClassVar[Literal["hook"]] = "hook"
    phase: HookPhase
    fields: JSON


class TaskStarted(_Event):
    """A task started: a subagent (`task_type` "local_agent", `agent_type` its definition)
    or a background command ("local_bash", no `agent_type`), for the tool call
    `tool_use_id`. `task_id` names it from now on (stop_task, the later Task* events);
    `run_id` names this run of it. `prompt` is a subagent's brief."""

    kind: ClassVar[Literal["task_started"]] = "task_started"
    task_id: str
    agent_type: str
    description: str
    _: KW_ONLY
    tool_use_id: str | None = None
    task_type: str = 'local_agent'
    backgrounded: bool = False
    prompt: str | None = None
    run_id: str | None = None


class TaskStep(_Event):
    """A subagent is about to use a tool: what it is doing (`description`), with which
    tool, and its usage so far (`total_tokens`, `tool_uses`, `duration_ms`)."""

    kind: ClassVar[Literal["task_step"]] = "task_step"
    task_id: str
    description: str
    last_tool_name: str
    usage: JSON


class TaskUpdated(_Event):
    """A task's state changed; `patch` holds what changed (`status`, `end_time`)."""

    kind: ClassVar[Literal["task_updated"]] = "task_updated"
    task_id: str
    patch: JSON


class TaskNotified(_Event):
    """A task ended (`status`: completed, failed or stopped): a one-line `summary` (a
    subagent's report when `report`), where its output is, and a subagent's `usage`."""

    kind: ClassVar[Literal["task_notified"]] = "task_notified"
    task_id: str
    status: str
    summary: str
    output_file: str
    _: KW_ONLY
    usage: JSON | None = None
    report: bool = False


class BackgroundTasksChanged(_Event):
    """The tasks now running in the background, each as it started (in that order)."""

    kind: ClassVar[Literal["background_tasks_changed"]] = "background_tasks_changed"
    tasks: tuple[TaskStarted, ...]


class TaskProgress(_Event):
    """Something a subagent's own run emitted; `task_id` here is the Task call's
    tool_use_id (its frames' `parent_tool_use_id`), not the task's own id."""

    kind: ClassVar[Literal["task_progress"]] = "task_progress"
    task_id: str
    event: Event


class TaskFinished(_Event):
    kind: ClassVar[Literal["task_finished"]] = "task_finished"
    task_id: str
    outcome: Outcome
    stats: RunStats


class RunStats(_Event):  # not an event itself: a RunFinished field
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


class ThinkingProgress(_Event):
    """Thinking streamed so far in this message, estimated in tokens (a delta's length in
    characters over four, rounded up, as the reference estimates), and the latest delta's
    share: a UI can show progress while the model thinks."""

    kind: ClassVar[Literal["thinking_progress"]] = "thinking_progress"
    estimated: int
    delta: int


class ToolProgress(_Event):
    """A tool call still running (sent every few seconds while it runs, so a UI can show
    it is alive)."""

    kind: ClassVar[Literal["tool_progress"]] = "tool_progress"
    tool_use_id: str
    tool_name: str
    elapsed_s: int


class TurnDuration(_Event):
    """How long a prompt's turn took, how many messages the conversation has, and how much
    background work it left running."""

    kind: ClassVar[Literal["turn_duration"]] = "turn_duration"
    duration_ms: int
    message_count: int
    pending_agents: int


class StopHookSummary(_Event):
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


class Refused(_Event):
    """The model refused (`wisp.engine.refusal`). `step` says what follows: "retry" (the
    same model again, after a note), "fallback" (another model, the refused message
    retracted) or "final" (the run ends); `facts` what is reported of it."""

    kind: ClassVar[Literal["refused"]] = "refused"
    step: Literal["retry", "fallback", "final"]
    facts: JSON


class ElicitationComplete(_Event):
    """An MCP server says a URL-mode elicitation the user was sent to is done."""

    kind: ClassVar[Literal["elicitation_complete"]] = "elicitation_complete"
    server: str
    elicitation_id: str


class RunFinished(_Event):
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
