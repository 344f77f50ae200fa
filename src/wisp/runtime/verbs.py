"""The verbs that change how a session's next turns run: thinking, effort, the system
prompt, session hooks, structured output. A base class of `Runtime`, kept apart so that
`runtime.py` is the session and `turns.py` its turn machinery; front ends call these
instead of editing the engine's configuration (`tests/architecture/test_runtime_seal.py`
holds them to it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.engine.context import RunContext
    from wisp.engine.retry import RetryPolicy
    from wisp.engine.tool_calls import ToolRunState
    from wisp.hooks.model import HookMatcher
    from wisp.models.base import Model
    from wisp.project.context import ProjectContext
    from wisp.runtime.config import RuntimeConfig
    from wisp.tools.base import Tool



class SessionVerbs:
    config: RuntimeConfig
    ctx: RunContext
    project: ProjectContext
    base_tools: dict[str, Tool]
    tool_state: ToolRunState

    def set_max_thinking_tokens(self, tokens: int | None) -> None:
        """A budget (for classic models; current ones think adaptively, as the
        reference's do); 0 turns thinking off; None goes back to the default."""
        choices = self.ctx.config.thinking
        if tokens is None:
            choices.budget, choices.mode = None, None
        elif tokens <= 0:
            choices.budget, choices.mode = None, "disabled"
        else:
            choices.budget, choices.mode = tokens, "enabled"

    def set_thinking_display(self, display: str | None) -> None:
        """How thinking is shown (`wisp.models.shape`); None restores the default."""
        self.ctx.config.thinking.display = display

    @property
    def effort(self) -> str:
        from wisp.models.shape import DEFAULT_EFFORT

        return self.ctx.config.thinking.effort or DEFAULT_EFFORT

    def set_effort(self, effort: str | None) -> None:
        """How hard the model works on each request from now on (`output_config.effort`
        for models that take it); None goes back to the default."""
        self.ctx.config.thinking.effort = effort

    def set_system_prompt(self, custom: str | None, append: str | None) -> None:
        """The system prompt from the next request on: `custom` replaces wisp's (None
        keeps it, "" empties it), `append` goes after it; the output style still applies."""
        from wisp.prompts.system import system_blocks

        self.ctx.config.system_blocks = system_blocks(self.config.cwd, custom, append,
                                                      style=self.project.style)

    def add_hook_matchers(self, matchers: list[HookMatcher]) -> None:
        """Session hooks a host registered (an SDK's callbacks): they run after the ones
        settings configured. Nothing to add to when hooks are off for this session."""
        if self.ctx.hooks is not None and matchers:
            self.ctx.hooks.add(matchers)

    def enable_structured_output(self, schema: JSON) -> None:
        """From now on a turn ends on a StructuredOutput call valid against `schema`
        (checked by the caller: `wisp.engine.structured.schema_problem`)."""
        from wisp.engine.structured import enable_structured_output

        enable_structured_output(self.ctx.config, schema)

    @property
    def offered_tool_names(self) -> list[str]:
        """The tools the model is offered now, by name: the session's and the extra
        definitions (StructuredOutput), in the order `system/init` lists them."""
        config = self.ctx.config
        return [*config.tools, *(str(d.get("name")) for d in config.extra_tool_definitions)]

    def define_agents(self, agents: JSON) -> None:
        """Agents a host defined (initialize's `agents`, as `--agents`): Task can launch
        them from now on. Nothing to define when the session has no subagents."""
        from wisp.engine.subagents import parse_agents
        from wisp.tools.task import TaskTool

        runner = self.ctx.subagents
        if runner is None:
            return
        runner.define(parse_agents(agents))
        for tools in (self.base_tools, self.ctx.config.tools):
            if "Task" in tools:
                tools["Task"] = TaskTool(runner.listing())

    @property
    def cwd(self) -> Path:
        """The folder the session was opened in."""
        return self.config.cwd

    @property
    def base_env(self) -> Mapping[str, str]:
        """The environment the session was opened with, before settings' `env`."""
        return self.config.env

    @property
    def resumed(self) -> bool:
        """Opened on an earlier session (`--resume`, `--continue`)."""
        return self.config.resumed

    @property
    def api_key_source(self) -> str:
        """Where the API key came from, as `system/init` reports it."""
        return self.ctx.config.api_key_source

    def environment_changed(self) -> None:
        """The session's environment changed (a host's update): a model chosen by the
        environment (providers, keys) looks again."""
        from wisp.models.route import RoutingModel

        if isinstance(self.ctx.model, RoutingModel):
            self.ctx.model.environment_changed()

    def context_usage(self) -> JSON:
        """What fills the context window now (the duplex answer, the UI's /context)."""
        from wisp.runtime.context_usage import context_usage

        return context_usage(self.ctx, self.project)

    async def session_title(self, description: str | None) -> str:
        """A title for the session, from a model call beside the conversation."""
        from wisp.engine.aside import session_title

        return await session_title(self.ctx, description)

    async def side_answer(self, question: str, history: list[Any] | None = None) -> str:
        """An answer from a model call beside the conversation; the session's history
        is not changed."""
        from wisp.engine.aside import side_answer

        return await side_answer(self.ctx, question, history)

    @property
    def disabled_tools(self) -> frozenset[str]:
        """Tools the launch took away (`--disallowedTools`): an MCP server's are too."""
        return self.ctx.config.disabled_tools

    # What a host reads and changes between turns ------------------------------------

    @property
    def conversation(self) -> Sequence[JSON]:
        """The session's messages so far (to replay, export or count); read-only: every
        change goes through the session, so the transcript cannot miss one."""
        return self.ctx.session.history

    def spend_at_most(self, usd: float | None) -> None:
        """From now on the session spends at most `usd` more on model requests (the
        engine stops before one past it); None: no limit."""
        config = self.ctx.config
        config.max_budget_usd = None if usd is None else self.ctx.session.usage.cost_usd + usd

    def offer_tools(self, tools: Mapping[str, Tool], *, replacing: Iterable[str] = ()) -> None:
        """Tools the host adds from the next model call on (in place of those named in
        `replacing`): MCP servers' come and go around them (`Runtime.tools_changed`)."""
        gone = tuple(replacing)
        for current in (self.base_tools, self.ctx.config.tools):
            for name in gone:
                current.pop(name, None)
            current.update(tools)

    async def run_tool_call(self, call: JSON) -> JSON:
        """One tool_use block run outside a turn, judged by the permission rules as in
        one: its result is reported as any call's is; returns the tool_result block."""
        from wisp.engine.tool_calls import run_one

        block, shown = await run_one(self.ctx, self.tool_state, call)
        self.ctx.emit(shown)
        return block

    def answer_unrun_calls(self, text: str) -> None:
        """The last model reply's tool calls, when none got an answer (the run stopped
        before them), are answered as errors saying `text`, so the conversation stays
        valid for the next turn; each answer is reported as any tool result is."""
        from wisp.engine.events import ToolResultReady
        from wisp.engine.session import append_user

        session = self.ctx.session
        history = session.history
        if not history or history[-1].get("role") != "assistant":
            return
        blocks = [{"type": "tool_result", "tool_use_id": block.get("id"), "is_error": True,
                   "content": text}
                  for block in history[-1].get("content") or []
                  if isinstance(block, dict) and block.get("type") == "tool_use"]
        if not blocks:
            return
        for block in blocks:
            self.ctx.emit(ToolResultReady(block, text, {"id": block["tool_use_id"]}, ""))
        append_user(history, blocks)
        session.record_user(blocks)

    async def notify(self, message: str, notification_type: str) -> None:
        """Notification hooks: the user is wanted (a permission prompt is waiting)."""
        from wisp.engine.hook_points import fire

        await fire(self.ctx, "Notification", message=message,
                   notification_type=notification_type)

    @property
    def side_model(self) -> tuple[Model, RetryPolicy]:
        """The model, and the retry policy, for a request of the host's own beside the
        conversation (`wisp serve`'s grader): the session's."""
        return self.ctx.model, self.ctx.config.retry

    @property
    def agent_listing(self) -> dict[str, str]:
        """The agents Task can launch, by name, with their descriptions (none when the
        session has no subagents)."""
        runner = self.ctx.subagents
        return runner.listing() if runner is not None else {}
