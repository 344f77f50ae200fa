"""Task: hands a self-contained job to a subagent with its own context window.

The subagent runs the same loop with its own history, the agent definition's system
prompt and tools, and the parent's permissions. Its frames reach the client tagged with
this call's `parent_tool_use_id`; only its final answer comes back to the parent model:
as this call's result, or, with `run_in_background`, as a notice at a later turn (the
call itself returns at once with the task's id).
"""

from __future__ import annotations

from typing import ClassVar

from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult


class TaskTool(Tool):
    name: ClassVar[str] = "Task"
    kind: ClassVar[ToolKind] = "meta"
    description: ClassVar[str] = (
        "Launch a subagent to handle a self-contained task (research, a multi-step search, "
        "a focused change) in a fresh context. Give it a complete brief: it cannot see this "
        "conversation. Only its final report comes back. Available agent types: {agents}"
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A 3-5 word summary of the task"},
            "prompt": {"type": "string", "description": "The complete task for the subagent"},
            "subagent_type": {"type": "string", "description": "Which agent type to use"},
            "run_in_background": {
                "type": "boolean",
                "description": "Start the subagent and go on at once; you are told when it "
                "finishes. Leave unset when your next step needs its report.",
            },
        },
        "required": ["description", "prompt"],
    }

    def __init__(self, agents: dict[str, str]) -> None:
        self.agents = agents  # name → description, listed for the model

    def api_definition(self) -> JSON:
        listing = "; ".join(f"{name}: {desc}" for name, desc in self.agents.items())
        return {
            "name": self.name,
            "description": self.description.format(agents=listing),
            "input_schema": self.input_schema,
        }

    def is_read_only(self, tool_input: JSON) -> bool:
        return True  # the subagent's own tool calls are checked one by one

    def describe(self, tool_input: JSON) -> str:
        return str(tool_input.get("description") or "subagent task")

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        if ctx.run_subagent is None:
            return ToolResult.error("Subagents are not available in this context.")
        agent = str(tool_input.get("subagent_type") or "general-purpose")
        if agent not in self.agents:
            known = ", ".join(self.agents)
            return ToolResult.error(f"Unknown subagent_type {agent!r}. Available: {known}")
        return await ctx.run_subagent(
            agent,
            str(tool_input.get("description", "")),
            str(tool_input["prompt"]),
            ctx.tool_use_id or "",
            tool_input.get("run_in_background") is True,
        )
