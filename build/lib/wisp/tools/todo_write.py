"""TodoWrite: the model's own task list, kept in session state."""

from __future__ import annotations

from typing import Any, ClassVar

from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

STATUSES = ("pending", "in_progress", "completed")


def _problem(index: int, item: Any) -> str | None:
    if not isinstance(item, dict):
        return f"todos[{index}] must be an object"
    for key in ("content", "activeForm"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            return f"todos[{index}].{key} must be a non-empty string"
    if item.get("status") not in STATUSES:
        return f"todos[{index}].status must be one of: {', '.join(STATUSES)}"
    return None


class TodoWrite(Tool):
    name: ClassVar[str] = "TodoWrite"
    description: ClassVar[str] = (
        "Replace the session's task list with `todos`. Use it to plan and track multi-step "
        "work: each item has `content` (imperative, e.g. 'Run the tests'), `activeForm` "
        "(present continuous, e.g. 'Running the tests') and `status` (pending, in_progress "
        "or completed). Keep exactly one item in_progress while working, and mark items "
        "completed as soon as they are done. Skip it for trivial single-step requests."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The complete, updated task list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                },
            }
        },
        "required": ["todos"],
    }
    kind: ClassVar[ToolKind] = "meta"

    def is_read_only(self, tool_input: JSON) -> bool:
        return True

    def describe(self, tool_input: JSON) -> str:
        todos = tool_input.get("todos")
        return f"Update the todo list ({len(todos) if isinstance(todos, list) else 0} items)"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        todos: list[Any] = tool_input["todos"]
        for index, item in enumerate(todos):
            item_problem = _problem(index, item)
            if item_problem:
                return ToolResult.error(f"InputValidationError: {item_problem}")
        new = [
            {"content": t["content"], "status": t["status"], "activeForm": t["activeForm"]}
            for t in todos
        ]
        old = ctx.state.get("todos", [])
        # A fully completed list is finished business; start the next task from empty.
        all_done = bool(new) and all(t["status"] == "completed" for t in new)
        ctx.state["todos"] = [] if all_done else new
        return ToolResult(
            content=(
                "Todos have been modified successfully. Keep the list current: mark each "
                "task in_progress when you start it and completed when it is done."
            ),
            data={"oldTodos": old, "newTodos": new},
        )
