"""Projections of engine events at the edge: stream-json frames, the json result, text.

`StreamJson` is the only place engine events become frames. It owns what the engine
does not know: the session id, frame uuids (except a message's own identity, which the
transcript shares), `parent_tool_use_id` (a subagent's events arrive as `TaskProgress`)
and the `result` frame with its running `result_index`.

The engine's modules are imported lazily here: print mode writes `system/init` through
`wisp.wire.frames` before the engine loads, and this module sits on that path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.stamps import new_uuid
from wisp.wire import frames
from wisp.wire.system_frames import (
    conversation_reset,
    local_command_output,
    progress_frame,
    refusal_frame,
    stop_hook_summary,
)
from wisp.wire.writer import FrameSink

if TYPE_CHECKING:
    from collections.abc import Callable

    from wisp.engine.events import (
        Event,
        RunFinished,
        StatusChanged,
        TaskProgress,
        TaskStarted,
    )
    from wisp.engine.outcome import Outcome



class StreamJson:
    """An `EventSink` that writes each event's frame to `out`. With `results`, result
    frames go there instead, to a front end that decides when each is written (print
    mode: after SessionEnd hooks, and after the turns background work wakes)."""

    def __init__(self, out: FrameSink, session_id: str, *,
                 results: Callable[[JSON], None] | None = None) -> None:
        self.out = out
        self.session_id = session_id
        self.results = results
        self.result_count = 0
        # --forward-subagent-text (or initialize's forwardSubagentText): a foreground
        # subagent's text and thinking are shown too, not only its tool calls.
        self.forward_subagent_text = False
        self.tasks = TaskFrames()
        self.api_ms = 0  # the session's time in model calls, over its results
        # Fields the front end stamps on the next result: what the prompt that started the
        # turn said of itself (`origin`, `user_message_uuid`), unless the run names its own.
        self.turn_stamps: JSON = {}
        # `system/turn_duration` and `system/stop_hook_summary` are the reference's own
        # (internal: measured, it never writes them to stdout); wisp writes them when
        # WISP_PROGRESS_FRAMES=1 asks (docs/protocol.md, "Progress frames").
        self.internal_frames = False

    def emit(self, event: Event) -> None:
        from wisp.engine.events import RunFinished

        if isinstance(event, RunFinished):
            frame = self.result(event)
            (self.out.write if self.results is None else self.results)(frame)
            return
        built = self.frame(event)
        if built is not None:
            self.out.write(built)
        self._after(event)

    def _after(self, event: Event) -> None:
        """What an event changes beyond its own frame: a compaction's summary follows its
        boundary; after /clear's reset frame, frames carry the new session id."""
        from wisp.engine import events as ev

        if isinstance(event, ev.Compacted) and event.summary is not None:
            self.out.write(frames.user(event.summary, session_id=self.session_id,
                                       uuid_=event.summary_uuid, isReplay=False,
                                       isSynthetic=True))
        elif isinstance(event, ev.ConversationReset):
            self.session_id = event.new_session_id
        elif isinstance(event, ev.TaskStarted):
            prompt = self.tasks.prompt_frame(event, self.session_id)
            if prompt is not None:
                self.out.write(prompt)

    def frame(self, event: Event, parent: str | None = None) -> JSON | None:
        """The frame for one event (None: not shown on stream-json). `parent` is the Task
        call whose subagent emitted it."""
        from wisp.engine import events as ev

        sid = self.session_id
        match event:
            case ev.TaskProgress():
                return self.tasks.subagent_frame(self, event)
            case (ev.TaskStarted() | ev.TaskStep() | ev.TaskUpdated() | ev.TaskNotified()
                  | ev.BackgroundTasksChanged()):
                return self.tasks.frame(event, sid)
            case ev.TaskFinished() | ev.RunFinished():
                return None
            case ev.ConversationReset():
                return conversation_reset(event, sid)
            case ev.LocalCommandOutput():
                return local_command_output(event, sid)
        return (self._message(event, parent) or self._system(event)
                or self._progress(event, parent))

    def _message(self, event: Event, parent: str | None) -> JSON | None:
        """The assistant and user frames: what the model said and what tools answered."""
        from wisp.engine import events as ev

        sid = self.session_id
        match event:
            case ev.BlockShown():
                extra: JSON = {"aborted": True} if event.aborted else {}
                return frames.assistant(event.message, event.blocks, session_id=sid,
                                        request_id=event.request_id, parent_tool_use_id=parent,
                                        uuid_=event.uuid, **extra)
            case ev.StreamDelta():
                frame = frames.stream_event(event.event, session_id=sid,
                                            message_id=event.message_id,
                                            parent_tool_use_id=parent)
                if event.ttft_ms is not None:
                    frame["ttft_ms"] = event.ttft_ms
                return frame
            case ev.ToolResultReady():
                return frames.user([event.block], session_id=sid, parent_tool_use_id=parent,
                                   uuid_=event.uuid, tool_use_result=event.data,
                                   tool_result_meta=[event.meta])
            case ev.Interrupted():
                return frames.user([{"type": "text", "text": event.text}], session_id=sid,
                                   parent_tool_use_id=parent)
            case ev.ApiErrorShown():
                synthetic = {"id": new_uuid(), "model": "<synthetic>", "usage": {}}
                return frames.assistant(
                    synthetic, [{"type": "text", "text": event.text}], session_id=sid,
                    request_id=None, parent_tool_use_id=parent, error=event.error,
                    is_api_error_message=True, api_error_status=event.status)
        return None

    def _progress(self, event: Event, parent: str | None) -> JSON | None:
        """Frames that tell a UI the session is alive and where a turn stands."""
        from wisp.engine import events as ev

        sid = self.session_id
        match event:
            case ev.ToolProgress() | ev.ThinkingProgress() | ev.ElicitationComplete():
                return progress_frame(event, sid, parent)
            case ev.Refused():
                return refusal_frame(event, sid, parent)
            case ev.TurnDuration() | ev.StopHookSummary() if not self.internal_frames:
                return None
            case ev.TurnDuration():
                return frames.system("turn_duration", sid, duration_ms=event.duration_ms,
                                     message_count=event.message_count,
                                     pending_background_agent_count=event.pending_agents)
            case ev.StopHookSummary():
                return stop_hook_summary(event, sid)
        return None

    def _system(self, event: Event) -> JSON | None:  # noqa: PLR0911 (one arm per event)
        from wisp.engine import events as ev

        sid = self.session_id
        match event:
            case ev.ApiRetry():
                return frames.system("api_retry", sid, attempt=event.attempt,
                                     max_retries=event.max_retries,
                                     retry_delay_ms=event.delay_ms, error_status=event.status,
                                     error=event.error, message=event.message)
            case ev.ModelFallback():
                return frames.system("model_fallback", sid, trigger=event.trigger,
                                     original_model=event.original,
                                     fallback_model=event.fallback, content=event.reason)
            case ev.PermissionDenied():
                return frames.system("permission_denied", sid, tool_name=event.tool_name,
                                     tool_use_id=event.tool_use_id, message=event.message)
            case ev.Compacted():
                metadata: JSON = {"trigger": event.trigger, "pre_tokens": event.pre_tokens}
                if event.duration_ms is not None:
                    metadata["duration_ms"] = event.duration_ms
                extra = ({"logical_parent_uuid": event.logical_parent}
                         if event.logical_parent else {})
                return frames.system("compact_boundary", sid, compact_metadata=metadata,
                                     **extra)
            case ev.CompactionFailed():
                return frames.system("compact_failed", sid, error=event.error)
            case ev.StatusChanged():
                return status_frame(event, sid)
            case ev.HookEvent():
                return frames.system(event.phase, sid, **event.fields)
            case ev.Informational():
                return frames.system("informational", sid, content=event.content,
                                     level=event.level, **event.extra)
        return None

    def result(self, finished: RunFinished) -> JSON:
        frame = result_frame(finished, self.session_id, self.result_count)
        self.result_count += 1
        self.api_ms += finished.stats.api_ms
        for key, value in self.turn_stamps.items():
            if frame.get(key) is None:
                frame[key] = value
        return frame


class TaskFrames:
    """The frames of tasks (`task_started`, `task_progress`, `task_updated`,
    `task_notification`, `background_tasks_changed`) and of what subagents emit. It
    remembers each task's start, since its later frames repeat who it is.

    A subagent's assistant frames show its tool calls; its text and thinking are shown
    only for a background subagent or with `forward_subagent_text` (as the reference
    does), and its stream events never. Its frames carry `parent_tool_use_id` (the Task
    call), `agent_id`, `subagent_type` and `task_description`."""

    def __init__(self) -> None:
        self.started: dict[str, TaskStarted] = {}  # by task id
        self.by_call: dict[str, TaskStarted] = {}  # by the tool_use_id that started it

    def frame(self, event: Event, sid: str) -> JSON | None:
        from wisp.engine import events as ev

        match event:
            case ev.TaskStarted():
                return self._started(event, sid)
            case ev.TaskStep():
                started = self.started.get(event.task_id)
                return frames.system(
                    "task_progress", sid, **self._who(event.task_id),
                    description=event.description,
                    subagent_type=started.agent_type if started else "",
                    usage=event.usage, last_tool_name=event.last_tool_name)
            case ev.TaskUpdated():
                who = self._who(event.task_id)
                who.pop("tool_use_id", None)
                return frames.system("task_updated", sid, **who, patch=event.patch)
            case ev.TaskNotified():
                extra: JSON = {"summary_is_report": True} if event.report else {}
                if event.usage is not None:
                    extra["usage"] = event.usage
                return frames.system("task_notification", sid, **self._who(event.task_id),
                                     status=event.status, output_file=event.output_file,
                                     summary=event.summary, **extra)
            case ev.BackgroundTasksChanged():
                return frames.system("background_tasks_changed", sid,
                                     tasks=[_listed(t) for t in event.tasks])
        return None

    def _started(self, event: TaskStarted, sid: str) -> JSON:
        """`task_started`, remembering the task for its later frames."""
        self.started[event.task_id] = event
        if event.tool_use_id:
            self.by_call[event.tool_use_id] = event
        agent = event.task_type == "local_agent"
        fields: JSON = {**self._who(event.task_id), "description": event.description}
        if agent:
            fields["subagent_type"] = event.agent_type
        fields["is_backgrounded"] = event.backgrounded
        if agent:
            fields["spawn_depth"] = 1
        fields["task_type"] = event.task_type
        if event.prompt is not None:
            fields["prompt"] = event.prompt
        return frames.system("task_started", sid, **fields)

    def _who(self, task_id: str) -> JSON:
        started = self.started.get(task_id)
        who: JSON = {"task_id": task_id}
        if started is not None and started.run_id:
            who["run_id"] = started.run_id
        if started is not None and started.tool_use_id:
            who["tool_use_id"] = started.tool_use_id
        return who

    def prompt_frame(self, event: TaskStarted, sid: str) -> JSON | None:
        """A foreground subagent's brief, shown as its first user message."""
        if event.task_type != "local_agent" or event.backgrounded or event.prompt is None:
            return None
        return frames.user([{"type": "text", "text": event.prompt}], session_id=sid,
                           parent_tool_use_id=event.tool_use_id, agent_id=event.task_id,
                           subagent_type=event.agent_type,
                           task_description=event.description)

    def subagent_frame(self, projection: StreamJson, event: TaskProgress) -> JSON | None:
        from wisp.engine import events as ev

        inner = event.event
        if isinstance(inner, ev.RunFinished | ev.StreamDelta):
            return None
        started = self.by_call.get(event.task_id)
        if isinstance(inner, ev.Interrupted) and started and not started.backgrounded:
            return None  # a stopped foreground subagent: its Task call's result says so
        if isinstance(inner, ev.BlockShown) and not (
                projection.forward_subagent_text or (started and started.backgrounded)):
            shown = [b for b in inner.blocks
                     if b.get("type") not in ("text", "thinking", "redacted_thinking")]
            if not shown:
                return None
            if len(shown) != len(inner.blocks):
                inner = ev.BlockShown(inner.message, shown, inner.request_id, inner.uuid,
                                      inner.aborted)
        frame = projection.frame(inner, event.task_id)
        if frame is not None and started is not None and frame["type"] in ("assistant", "user"):
            frame.update(agent_id=started.task_id, subagent_type=started.agent_type,
                         task_description=started.description)
        return frame


def status_frame(event: StatusChanged, sid: str) -> JSON:
    """`status`, with what changed: a compaction's result or else a new permission mode."""
    extra: JSON = {}
    if isinstance(event.compact_result, str):
        extra["compact_result"] = event.compact_result
    elif event.permission_mode is not None:
        extra["permissionMode"] = event.permission_mode
    return frames.system("status", sid, status=event.status, **extra)


def _listed(started: TaskStarted) -> JSON:
    entry: JSON = {"task_id": started.task_id}
    if started.run_id:
        entry["run_id"] = started.run_id
    entry["task_type"] = started.task_type
    if started.task_type == "local_agent":
        entry["subagent_type"] = started.agent_type
    entry["description"] = started.description
    return entry


def result_frame(finished: RunFinished, session_id: str, index: int) -> JSON:
    from wisp.engine.outcome import ApiFailed, Success, api_error_text, ending

    outcome, stats = finished.outcome, finished.stats
    subtype, terminal_reason, errors = ending(outcome)
    frame: JSON = {
        "type": "result",
        "subtype": subtype,
        "is_error": not isinstance(outcome, Success),
        "duration_ms": stats.duration_ms,
        "duration_api_ms": stats.api_ms,
        "num_turns": stats.num_turns,
        "session_id": session_id,
        "stop_reason": stats.stop_reason,
        "total_cost_usd": stats.session_usage.cost_usd,
        "usage": stats.run_usage.totals(),
        "modelUsage": stats.session_usage.model_usage(),
        "model_usage_since_last_result": stats.run_usage.model_usage(),
        "permission_denials": stats.denials,
        "terminal_reason": terminal_reason,
        "api_error_status": None,
        "errors": errors,
        "uuid": new_uuid(),
        "result_index": index,
    }
    if isinstance(outcome, Success):
        frame["result"] = outcome.text
        if outcome.structured_output is not None:
            frame["structured_output"] = outcome.structured_output
    elif isinstance(outcome, ApiFailed):
        frame["result"] = api_error_text(outcome.error)
        frame["api_error_status"] = outcome.error.status
        frame["api_error_type"] = outcome.error.error_type
    if finished.origin is not None:
        frame["origin"] = finished.origin  # what started a turn no user prompted
    if finished.local_command is not None:
        # A built-in slash command's turn: no model call ended it (the reference's shape).
        del frame["terminal_reason"], frame["api_error_status"]
        frame["local_command"] = finished.local_command
    if terminal_reason is None:  # no model call ended it (a prompt a hook stopped)
        frame.pop("terminal_reason", None)
        frame.pop("api_error_status", None)
    return frame


def text_output(outcome: Outcome) -> str:
    """`--output-format text`: the answer, or the error line, read off the typed outcome.
    Max turns gets the reference's short form (printed without a trailing newline)."""
    from wisp.engine.decide import MaxTurnsReached
    from wisp.engine.outcome import ApiFailed, LimitHit, Success, api_error_text, ending

    match outcome:
        case Success(text=text):
            return text
        case ApiFailed(error=error):
            # The result's words, as json output gives them (its subtype says "success").
            return api_error_text(error)
        case LimitHit(limit=MaxTurnsReached(max_turns=n)):
            return f"Error: Reached max turns ({n})"
    subtype, _, errors = ending(outcome)
    return f"Error: {(errors or [subtype])[0]}"
