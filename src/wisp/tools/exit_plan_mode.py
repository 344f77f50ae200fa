"""ExitPlanMode: the model presents its plan and asks to leave plan mode.

In plan mode the model only reads; when its plan is ready it calls this tool with the plan
(Markdown). The call always asks the user (`asks_user`): the terminal UI shows the plan
with the ways to go on, an SDK host gets `can_use_tool` with `requires_user_interaction`,
and plain `-p` (nobody to ask) refuses it. Approved, the plan is saved in the session's
plan file (`plan_file`), which `get_plan` reads back, and plan mode ends: to the mode the
approval chose (accept-edits from the terminal UI's first choice, a host's `setMode`),
else to default. Refused, the model hears why and keeps planning.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input


def plan_file(env: Mapping[str, str], session_id: str) -> Path:
    """Where a session's plan is kept: `<config dir>/plans/<session id>.md`."""
    from wisp.paths import config_dir

    return config_dir(env) / "plans" / f"{session_id}.md"


def read_plan(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class ExitPlanMode(Tool):
    name: ClassVar[str] = "ExitPlanMode"
    description: ClassVar[str] = (
        "In plan mode, when your plan is ready, present it to the user with this tool and "
        "ask to start. `plan` is the whole plan in Markdown: the steps, the files each "
        "touches, and how the result will be checked. The user approves it (plan mode ends "
        "and you carry it out) or sends you back to planning with a reason. Use it only for "
        "plans of work that changes things, not after research or questions, and never "
        "outside plan mode."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {"plan": {"type": "string",
                                "description": "The plan, in Markdown, as the user should "
                                               "read it"}},
        "required": [],
    }
    kind: ClassVar[ToolKind] = "meta"
    asks_user: ClassVar[bool] = True

    def is_read_only(self, tool_input: JSON) -> bool:
        return False

    def describe(self, tool_input: JSON) -> str:
        return "Leave plan mode and carry out the plan"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        if ctx.plan is None:
            return ToolResult.error("ExitPlanMode is only for plan mode, and this session "
                                    "is not in plan mode.")
        path = ctx.plan.path
        plan = tool_input.get("plan") or read_plan(path)
        if not isinstance(plan, str) or not plan.strip():
            return ToolResult.error("There is no plan to present: pass it as `plan`.")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(plan, encoding="utf-8")
        mode = ctx.plan.leave()
        return ToolResult(
            content=(f"The user approved the plan, and plan mode is off (now: {mode}). Carry "
                     "the plan out, keeping the todo list current if it has several steps."
                     f"\n\nThe plan is saved at {path}; read it again whenever you need it."
                     f"\n\n## The approved plan\n{plan}"),
            data={"plan": plan, "isAgent": False, "filePath": str(path)})
