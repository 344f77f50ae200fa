"""Subagents: the Task tool's engine side.

A subagent is the same loop on a fresh history, with its definition's system prompt,
tools and model, the parent's permissions and hooks, and its events wrapped in
`TaskProgress` for the Task call that started it. Its usage is added to the parent
session's. It cannot start subagents of its own, which bounds the recursion.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.events import TaskFinished, TaskSink, TaskStarted
from wisp.engine.hook_points import fire
from wisp.engine.outcome import Success, ending
from wisp.engine.session import Session
from wisp.engine.tool_calls import ToolRunState
from wisp.errors import UsageError
from wisp.models import catalog
from wisp.prompts.system import environment_section
from wisp.tools.base import ToolResult

JSON = dict[str, Any]

GENERAL_PURPOSE_PROMPT = (
    "You are a subagent of wisp, working on one task handed to you by the main agent. "
    "Use your tools to do it thoroughly, then reply with a concise, complete report: what "
    "you found or changed, with file paths. The main agent sees only that final reply."
)


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    max_turns: int | None = None


GENERAL_PURPOSE = AgentDefinition(
    "general-purpose", "researches questions and carries out multi-step tasks",
    GENERAL_PURPOSE_PROMPT)


def parse_agents(raw: Mapping[str, Any]) -> dict[str, AgentDefinition]:
    """Agent definitions as the SDKs send them (initialize `agents`, or `--agents` JSON)."""
    agents: dict[str, AgentDefinition] = {}
    for name, spec in raw.items():
        if not isinstance(spec, dict):
            continue
        tools = spec.get("tools")
        agents[str(name)] = AgentDefinition(
            name=str(name), description=str(spec.get("description") or ""),
            prompt=str(spec.get("prompt") or ""),
            tools=tuple(map(str, tools)) if isinstance(tools, list) else None,
            disallowed_tools=tuple(map(str, spec.get("disallowedTools") or [])),
            model=spec.get("model") if isinstance(spec.get("model"), str) else None,
            max_turns=spec.get("maxTurns") if isinstance(spec.get("maxTurns"), int) else None)
    return agents


def load_agents_flag(raw: str) -> dict[str, AgentDefinition]:
    text = raw if raw.lstrip().startswith("{") else Path(raw).expanduser().read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--agents is not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise UsageError("--agents must be a JSON object of agent definitions")
    return parse_agents(data)


class SubagentRunner:
    def __init__(self, ctx: RunContext, tool_state: ToolRunState,
                 agents: dict[str, AgentDefinition]) -> None:
        self.parent = ctx
        self.tool_state = tool_state
        self.agents = {GENERAL_PURPOSE.name: GENERAL_PURPOSE, **agents}

    def listing(self) -> dict[str, str]:
        return {name: a.description for name, a in self.agents.items()}

    async def run(self, agent_type: str, description: str, prompt: str,
                  tool_use_id: str) -> ToolResult:
        from wisp.engine.loop import AgentLoop

        definition = self.agents[agent_type]
        parent = self.parent
        await fire(parent, "SubagentStart", agent_type=agent_type, agent_id=tool_use_id,
                   description=description)
        parent.emit(TaskStarted(tool_use_id, agent_type, description))
        sub_ctx = self._child_context(definition, tool_use_id)
        loop = AgentLoop(sub_ctx, ToolRunState(policy=self.tool_state.policy,
                                               ask_host=self.tool_state.ask_host))
        outcome = await loop.run(prompt)
        assert loop.finished is not None
        stats = loop.finished.stats
        parent.emit(TaskFinished(tool_use_id, outcome, stats))
        for model, tally in sub_ctx.session.usage.by_model.items():
            parent.session.usage.add(model, tally.tokens)
            parent.run_usage.add(model, tally.tokens)
        self.tool_state.denials.extend(stats.denials)
        if not isinstance(outcome, Success):
            subtype, _, errors = ending(outcome)
            from wisp.engine.outcome import ApiFailed, api_error_text

            first = (errors[0] if errors else api_error_text(outcome.error)
                     if isinstance(outcome, ApiFailed) else subtype)
            return ToolResult.error(f"The {agent_type} subagent failed: {first}")
        text = outcome.text
        totals = stats.run_usage.totals()
        return ToolResult(content=text or "(the subagent returned no text)",
                          data={"status": "completed", "agentType": agent_type,
                                "content": [{"type": "text", "text": text}],
                                "totalDurationMs": stats.duration_ms,
                                "totalTokens": totals["input_tokens"] + totals["output_tokens"],
                                "totalToolUseCount": stats.num_turns})

    def _child_context(self, definition: AgentDefinition, tool_use_id: str) -> RunContext:
        parent = self.parent
        tools = {n: t for n, t in parent.config.tools.items() if n != "Task"}
        if definition.tools is not None:
            tools = {n: t for n, t in tools.items() if n in definition.tools}
        tools = {n: t for n, t in tools.items() if n not in definition.disallowed_tools}
        cwd = parent.session.cwd
        system = [{"type": "text", "text": f"{definition.prompt}\n\n{environment_section(cwd)}"}]
        config = dataclasses.replace(
            parent.config, tools=tools, system_blocks=system, max_turns=definition.max_turns,
            json_schema=None, extra_tool_definitions=[], max_budget_usd=None)
        model = parent.session.model
        if definition.model and definition.model != "inherit":
            model = catalog.resolve_model(definition.model, {})
        session = Session(cwd=cwd, model=model, policy=parent.session.policy,
                          session_id=parent.session.session_id,
                          processes=parent.session.processes, abort=parent.session.abort)
        return RunContext(session=session, config=config, model=parent.model,
                          sink=TaskSink(parent.sink, tool_use_id),
                          parent_tool_use_id=tool_use_id, hooks=parent.hooks)
