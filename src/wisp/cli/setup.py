"""Assembles an engine (tools, permissions, model, config) from Options and the environment.

Shared by print mode and the duplex session, so both entry points behave the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp.cli.options import Options
from wisp.engine.context import EngineConfig, RunContext
from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.tool_calls import ToolRunState
from wisp.hooks.runner import HookRunner
from wisp.models import catalog
from wisp.models.base import Model
from wisp.permissions.engine import PermissionPolicy
from wisp.permissions.rules import Rule
from wisp.prompts.system import system_blocks
from wisp.settings.apply import hook_matchers
from wisp.settings.loader import Settings, load_settings, warn_about
from wisp.tools.base import Tool
from wisp.wire import frames
from wisp.wire.writer import FrameSink

JSON = dict[str, Any]


def api_key_source(env: Mapping[str, str]) -> str:
    if env.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY"
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_AUTH_TOKEN"
    return "none"


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


def effective_mode(opts: Options, settings: Settings) -> str:
    if opts.permission_mode_set:
        return opts.permission_mode
    mode = settings.permission_scalar("defaultMode")
    return mode if isinstance(mode, str) else opts.permission_mode


def thinking_config(opts: Options) -> JSON | None:
    if opts.max_thinking_tokens:
        return {"type": "enabled", "budget_tokens": opts.max_thinking_tokens}
    return None


def new_session(opts: Options, env: Mapping[str, str],
                settings: Settings | None = None) -> Session:
    model = opts.model
    if model is None and settings is not None and isinstance(settings.scalar("model"), str):
        model = settings.scalar("model")
    mode = effective_mode(opts, settings) if settings is not None else opts.permission_mode
    return Session(cwd=opts.cwd, model=catalog.resolve_model(model, env), permission_mode=mode)


def load_settings_for(opts: Options, env: Mapping[str, str]) -> Settings:
    """Loads and validates settings, warning on stderr about every skipped file."""
    settings = load_settings(opts.cwd, env, selected=opts.setting_sources, flag=opts.settings)
    warn_about(settings)
    if env is os.environ:
        os.environ.update(settings.merged_env())  # settings `env` applies to tools and hooks
    return settings


def engine_config(opts: Options, env: Mapping[str, str]) -> EngineConfig:
    tools, removed = select_tools(opts)
    return EngineConfig(
        tools=tools,
        system_blocks=system_blocks(opts.cwd, opts.system_prompt, opts.append_system_prompt),
        disabled_tools=removed,
        max_turns=opts.max_turns,
        max_budget_usd=opts.max_budget_usd,
        fallback_model=catalog.resolve_model(opts.fallback_model, env) if opts.fallback_model
        else None,
        include_partial_messages=opts.include_partial_messages,
        retry=RetryPolicy.from_env(env),
        thinking=thinking_config(opts),
        json_schema=opts.json_schema,
        api_key_source=api_key_source(env),
    )


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
    return ctx, ToolRunState(policy=policy)
