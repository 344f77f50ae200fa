"""Projections of engine events at the edge: stream-json frames, the json result, text.

`StreamJson` is the only place engine events become frames. It owns what the engine
does not know: the session id, frame uuids (except a message's own identity, which the
transcript shares), `parent_tool_use_id` (a subagent's events arrive as `TaskProgress`)
and the `result` frame with its running `result_index`.

The engine's modules are imported lazily here: print mode writes `system/init` through
`wisp.wire.frames` before the engine loads, and this module sits on that path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wisp.stamps import new_uuid
from wisp.wire import frames
from wisp.wire.writer import FrameSink

if TYPE_CHECKING:
    from wisp.engine.events import Event, RunFinished
    from wisp.engine.outcome import Outcome

JSON = dict[str, Any]


class StreamJson:
    """An `EventSink` that writes each event's frame to `out`. With `hold_result` the
    result frame is kept in `held` instead, for a front end that still has frames to
    write before it (print mode's SessionEnd hooks)."""

    def __init__(self, out: FrameSink, session_id: str, *, hold_result: bool = False) -> None:
        self.out = out
        self.session_id = session_id
        self.hold_result = hold_result
        self.held: JSON | None = None
        self.result_count = 0

    def emit(self, event: Event) -> None:
        from wisp.engine.events import RunFinished

        if isinstance(event, RunFinished):
            frame = self.result(event)
            if self.hold_result:
                self.held = frame
                return
            self.out.write(frame)
            return
        built = self.frame(event)
        if built is not None:
            self.out.write(built)

    def frame(self, event: Event, parent: str | None = None) -> JSON | None:  # noqa: PLR0911
        """The frame for one event (None: not shown on stream-json). `parent` is the Task
        call whose subagent emitted it."""
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
                    request_id=None, parent_tool_use_id=parent, error="unknown",
                    is_api_error_message=True, api_error_status=event.status)
            case ev.TaskProgress():
                inner = event.event
                return None if isinstance(inner, ev.RunFinished) else self.frame(
                    inner, event.task_id)
            case ev.TaskStarted() | ev.TaskFinished() | ev.RunFinished():
                return None
        return self._system(event)

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
                return frames.system("compact_boundary", sid, compact_metadata={
                    "trigger": event.trigger, "pre_tokens": event.pre_tokens})
            case ev.CompactionFailed():
                return frames.system("compact_failed", sid, error=event.error)
            case ev.StatusChanged(permission_mode=None):
                return frames.system("status", sid, status=event.status)
            case ev.StatusChanged():
                return frames.system("status", sid, status=event.status,
                                     permissionMode=event.permission_mode)
            case ev.HookEvent():
                return frames.system(event.phase, sid, **event.fields)
        return None

    def result(self, finished: RunFinished) -> JSON:
        frame = result_frame(finished, self.session_id, self.result_count)
        self.result_count += 1
        return frame


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
