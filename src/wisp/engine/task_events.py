"""The engine's task events: subagents and background commands as they start, step,
change, end and report (`wisp.engine.tasks` keeps the tasks themselves). Part of the
closed `Event` union of `wisp.engine.events`, which re-exports each of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from wisp.engine.event_record import EventRecord
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from dataclasses import KW_ONLY  # for the type checker only: too slow to import here

    from wisp.engine.events import Event, RunStats
    from wisp.engine.outcome import Outcome


class TaskStarted(EventRecord):
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


class TaskStep(EventRecord):
    """A subagent is about to use a tool: what it is doing (`description`), with which
    tool, and its usage so far (`total_tokens`, `tool_uses`, `duration_ms`)."""

    kind: ClassVar[Literal["task_step"]] = "task_step"
    task_id: str
    description: str
    last_tool_name: str
    usage: JSON


class TaskUpdated(EventRecord):
    """A task's state changed; `patch` holds what changed (`status`, `end_time`)."""

    kind: ClassVar[Literal["task_updated"]] = "task_updated"
    task_id: str
    patch: JSON


class TaskNotified(EventRecord):
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


class BackgroundTasksChanged(EventRecord):
    """The tasks now running in the background, each as it started (in that order)."""

    kind: ClassVar[Literal["background_tasks_changed"]] = "background_tasks_changed"
    tasks: tuple[TaskStarted, ...]


class TaskProgress(EventRecord):
    """Something a subagent's own run emitted; `task_id` here is the Task call's
    tool_use_id (its frames' `parent_tool_use_id`), not the task's own id."""

    kind: ClassVar[Literal["task_progress"]] = "task_progress"
    task_id: str
    event: Event


class TaskFinished(EventRecord):
    kind: ClassVar[Literal["task_finished"]] = "task_finished"
    task_id: str
    outcome: Outcome
    stats: RunStats
