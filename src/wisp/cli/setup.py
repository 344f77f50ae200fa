"""Assembles an engine (tools, permissions, model, config) from Options and the environment.

Shared by print mode and the duplex session, so both entry points behave the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.cli import startup
from wisp.cli.options import Options
from wisp.cli.startup import api_key_source, effective_mode, starting_model
from wisp.engine.context import EngineConfig, RunContext
from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.tool_calls import AskHost, ToolRunState
from wisp.hooks.runner import HookRunner
from wisp.models import catalog
from wisp.models.base import Model
from wisp.permissions.engine import PermissionPolicy
from wisp.permissions.rules import Rule
from wisp.prompts.system import system_blocks
from wisp.settings.apply import hook_matchers
from wisp.settings.loader import Settings
from wisp.tools.base import Tool, ToolContext
from wisp.wire import frames
from wisp.wire.writer import FrameSink

if TYPE_CHECKING:
    from wisp.sessions.resume import SessionStart

JSON = dict[str, Any]
# Lives in startup (the duplex early answer needs it before the engine loads).
load_settings_for = startup.load_settings_for


def select_tools(opts: Options) -> tuple[dict[str, Tool], frozenset[str]]:
    """Built-ins filtered by --tools, minus tools named bare in --disallowedTools."""
    from wisp.tools.registry import builtin_tools

    tools = builtin_tools()
    if opts.tools is not None:
        wanted = set(opts.tools)
        tools = {name: tool for name, tool in tools.items() if name in wanted}
    removed = frozenset(r.tool for r in map(Rule.parse, opts.disallowed_tools) if r.content is None)
    return {n: t for n, t in tools.items() if n not in removed}, removed


def permission_policy(opts: Options, mode: str, settings: Settings | None = None
                      ) -> PermissionPolicy:
    deny = [r for r in map(Rule.parse, opts.disallowed_tools) if r.content is not None]
    allow = [Rule.parse(text) for text in opts.allowed_tools]
    ask: list[Rule] = []
    extra_dirs = [Path(d).expanduser() for d in opts.add_dirs]
    if settings is not None:
        deny += [Rule.parse(text, rank) for text, rank in settings.rules("deny")]
        allow += [Rule.parse(text, rank) for text, rank in settings.rules("allow")]
        ask += [Rule.parse(text, rank) for text, rank in settings.rules("ask")]
        extra_dirs += [Path(d).expanduser() for d in
                       settings.permission_scalar("additionalDirectories") or []]
    return PermissionPolicy(mode=mode, allow=allow, deny=deny, ask=ask, cwd=opts.cwd,
                            extra_dirs=extra_dirs)


def thinking_config(opts: Options) -> JSON | None:
    if opts.max_thinking_tokens:
        return {"type": "enabled", "budget_tokens": opts.max_thinking_tokens}
    return None


def new_session(opts: Options, env: Mapping[str, str], settings: Settings | None = None,
                start: SessionStart | None = None) -> Session:
    settings = settings if settings is not None else Settings()
    from wisp.sessions.resume import resolve_start

    # Fresh, resumed, continued or forked (UsageError for bad session flags); the
    # transcript is recorded unless --no-session-persistence.
    start = start if start is not None else resolve_start(opts, env)
    session = Session(cwd=opts.cwd, model=starting_model(opts, settings, env),
                      permission_mode=effective_mode(opts, settings, env),
                      session_id=start.session_id, history=start.history)
    if not opts.no_session_persistence:
        session.recorder = start.writer(opts.cwd, env)
        session.transcript_path = str(start.path)
    return session


def engine_config(opts: Options, env: Mapping[str, str]) -> EngineConfig:
    tools, removed = select_tools(opts)
    config = EngineConfig(
        tools=tools,
        system_blocks=system_blocks(opts.cwd, opts.system_prompt, opts.append_system_prompt),
        disabled_tools=removed,
        tool_filter=None if opts.tools is None else frozenset(opts.tools),
        max_turns=opts.max_turns,
        max_budget_usd=opts.max_budget_usd,
        fallback_model=catalog.resolve_model(opts.fallback_model, env) if opts.fallback_model
        else None,
        include_partial_messages=opts.include_partial_messages,
        retry=RetryPolicy.from_env(env),
        thinking=thinking_config(opts),
        api_key_source=api_key_source(env),
    )
    if opts.json_schema is not None:
        from wisp.engine.structured import enable_structured_output

        enable_structured_output(config, opts.json_schema)
    return config


def model_provider(env: Mapping[str, str], opts: Options) -> Model:
    from wisp.models.anthropic import AnthropicConfig, AnthropicModel

    config = AnthropicConfig.from_env(dict(env))
    if opts.betas:
        config = AnthropicConfig(**{**config.__dict__, "betas": tuple(opts.betas)})
    return AnthropicModel(config)


def build_run(opts: Options, session: Session, sink: FrameSink,
              env: Mapping[str, str] | None = None, settings: Settings | None = None
              ) -> tuple[RunContext, ToolRunState]:
    env = os.environ if env is None else env
    settings = settings if settings is not None else Settings()
    config = engine_config(opts, env)
    ctx = RunContext(session=session, config=config, model=model_provider(env, opts), sink=sink)
    ctx.hooks = HookRunner(
        hook_matchers(settings), cwd=str(opts.cwd), include_events=opts.include_hook_events,
        emit=lambda subtype, fields: sink.write(
            frames.system(subtype, session.session_id, **fields)))
    policy = permission_policy(opts, session.permission_mode, settings)
    tool_state = ToolRunState(policy=policy)
    if opts.permission_prompt_tool not in (None, "stdio"):
        tool_state.ask_host = mcp_permission_prompt(opts.permission_prompt_tool, ctx)
    install_subagents(ctx, tool_state, opts.agents_json)
    return ctx, tool_state


def install_subagents(ctx: RunContext, tool_state: ToolRunState, agents_json: str | None,
                      agents: dict[str, Any] | None = None) -> None:
    """Offers the Task tool (unless --tools left it out) backed by a subagent runner."""
    from wisp.engine.subagents import SubagentRunner, load_agents_flag, parse_agents
    from wisp.tools.task import TaskTool

    definitions = load_agents_flag(agents_json) if agents_json else {}
    definitions.update(parse_agents(agents or {}))
    runner = SubagentRunner(ctx, tool_state, definitions)
    ctx.subagents = runner
    if "Task" not in ctx.config.disabled_tools and ctx.config.tools_selected("Task"):
        ctx.config.tools["Task"] = TaskTool(runner.listing())


def mcp_permission_prompt(name: str, ctx: RunContext) -> AskHost:
    """`--permission-prompt-tool mcp__…`; `stdio` is wired by the duplex session instead."""
    from wisp.mcp.permission_prompt import McpPermissionPrompt

    session = ctx.session
    return McpPermissionPrompt(
        name, lambda: ctx.config.tools,
        lambda: ToolContext(cwd=session.cwd, abort=session.abort, processes=session.processes,
                            state=session.tool_state))
