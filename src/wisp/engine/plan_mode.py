"""Plan mode in the engine: the note the model reads while it is on, ExitPlanMode refused
outside it, and the controls that tool gets (`wisp.tools.base.PlanControl`).

ExitPlanMode is offered in every mode, as the reference offers it: `system/init` lists
exactly the tools the model is sent, and a tool list that changed with the mode would
also change every cached request prefix.

The mode itself lives on the permission policy, which keeps every write but the plan
file from happening (`wisp.permissions.engine`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from wisp.engine.events import StatusChanged
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.engine.context import RunContext

PLAN_TOOL = "ExitPlanMode"
NOT_IN_PLAN_MODE = ("ExitPlanMode is only for plan mode, and this session is not in plan "
                    "mode: go on with the work.")


def plan_path(ctx: RunContext) -> Path:
    from wisp.tools.exit_plan_mode import plan_file

    return plan_file(ctx.config.env or {}, ctx.session.session_id)


def in_plan_mode(ctx: RunContext) -> bool:
    return ctx.session.permission_mode == "plan"


def plan_note(ctx: RunContext) -> JSON:
    """A system block for each request made in plan mode."""
    return {"type": "text", "text": (
        "Plan mode is on: the user wants a plan before any change. Read, search and think "
        "as much as you need, but change nothing: no edits, no commands that write, no "
        "commits (they are refused). When the plan is ready, present it with ExitPlanMode "
        "(the whole plan in Markdown as `plan`) and wait for the user's answer. You may "
        f"draft it in {plan_path(ctx)}, the one file you may write in plan mode.")}


class PlanMode:
    """`PlanControl` for one session."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: RunContext) -> None:
        self._ctx = ctx

    @property
    def path(self) -> Path:
        return plan_path(self._ctx)

    def leave(self) -> str:
        session = self._ctx.session
        if session.permission_mode == "plan":
            session.permission_mode = "default"
            self._ctx.emit(StatusChanged(None, "default"))
        return session.permission_mode
