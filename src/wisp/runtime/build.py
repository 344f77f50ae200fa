"""Assembles an engine (tools, permissions, model, hooks, config) from a `RuntimeConfig`,
its settings and its environment overlay."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from wisp.engine.context import EngineConfig, RunContext
from wisp.engine.events import EventSink, HookEvent, HookPhase
from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.tool_calls import AskHost, ToolRunState
from wisp.hooks.model import HookMatcher
from wisp.hooks.runner import HookRunner
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.models.base import Model
from wisp.models.shape import Thinking
from wisp.permissions.engine import PermissionPolicy
from wisp.permissions.modes import PermissionMode
from wisp.prompts.system import system_blocks
from wisp.rules import Rule
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.facts import (
    api_key_source,
    checked_model,
    effective_mode,
    env_set_by,
    providers_file,
    starting_model,
)
from wisp.settings.apply import hook_matchers
from wisp.settings.loader import Settings
from wisp.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext
    from wisp.sessions.resume import SessionStart



def select_tools(config: RuntimeConfig) -> tuple[dict[str, Tool], frozenset[str]]:
    """Built-ins filtered by --tools, minus tools named bare in --disallowedTools."""
    from wisp.tools.registry import builtin_tools

    tools = builtin_tools()
    if config.tools is not None:
        wanted = set(config.tools)
        tools = {name: tool for name, tool in tools.items() if name in wanted}
    removed = frozenset(r.tool for r in map(Rule.parse, config.disallowed_tools)
                        if r.content is None)
    return {n: t for n, t in tools.items() if n not in removed}, removed


def permission_policy(config: RuntimeConfig, mode: PermissionMode, settings: Settings,
                      env: Mapping[str, str]) -> PermissionPolicy:
    deny = [r for r in map(Rule.parse, config.disallowed_tools) if r.content is not None]
    allow = [Rule.parse(text) for text in config.allowed_tools]
    deny += [Rule.parse(text, rank) for text, rank in settings.rules("deny")]
    allow += [Rule.parse(text, rank) for text, rank in settings.rules("allow")]
    ask = [Rule.parse(text, rank) for text, rank in settings.rules("ask")]
    extra_dirs = [Path(d).expanduser() for d in config.add_dirs]
    extra_dirs += [Path(d).expanduser() for d in
                   settings.permission_scalar("additionalDirectories") or []]
    return PermissionPolicy(mode=mode, allow=allow, deny=deny, ask=ask, cwd=config.cwd,
                            extra_dirs=extra_dirs, env=env)


def thinking_choices(config: RuntimeConfig, settings: Settings | None) -> Thinking:
    """The flags that shape thinking and effort; `effortLevel` from settings when no
    --effort was given."""
    effort = config.effort
    if effort is None and settings is not None:
        chosen = settings.scalar("effortLevel")
        effort = chosen if isinstance(chosen, str) else None
    return Thinking(mode=config.thinking, budget=config.max_thinking_tokens or None,
                    display=config.thinking_display, effort=effort)


def new_session(config: RuntimeConfig, env: Mapping[str, str], settings: Settings,
                policy: PermissionPolicy) -> Session:
    from wisp.sessions.resume import resolve_start

    # Fresh, resumed, continued or forked (UsageError for bad session flags); the
    # transcript is recorded unless no_session_persistence.
    start: SessionStart = config.start if config.start is not None else resolve_start(
        config, env)
    session = Session(cwd=config.cwd, model=starting_model(config, settings, env),
                      policy=policy, session_id=start.session_id, history=start.history,
                      last_message_uuid=start.parent_uuid)
    if not config.no_session_persistence:
        session.recorder = start.writer(config.cwd, env)
        session.transcript_path = str(start.path)
    return session


def engine_config(config: RuntimeConfig, env: Mapping[str, str],
                  project: ProjectContext | None = None, settings: Settings | None = None
                  ) -> EngineConfig:
    tools, removed = select_tools(config)
    engine = EngineConfig(
        tools=tools,
        system_blocks=system_blocks(config.cwd, config.system_prompt,
                                    config.append_system_prompt,
                                    style=project.style if project else None),
        context_blocks=project_context_blocks(project),
        disabled_tools=removed,
        tool_filter=None if config.tools is None else frozenset(config.tools),
        max_turns=config.max_turns,
        max_budget_usd=config.max_budget_usd,
        fallback_model=checked_model(catalog.resolve_model(config.fallback_model, env),
                                     settings) if config.fallback_model else None,
        include_partial_messages=config.include_partial_messages,
        retry=RetryPolicy.from_env(env),
        thinking=thinking_choices(config, settings),
        betas=config.betas,
        api_key_source=api_key_source(env),
        env=env,
    )
    if config.json_schema is not None:
        from wisp.engine.structured import enable_structured_output

        enable_structured_output(engine, config.json_schema)
    return engine


def model_provider(env: Mapping[str, str], betas: tuple[str, ...],
                   settings: Settings | None = None) -> Model:
    """The session's model: requests routed by spec (`wisp.models.route`) to the Anthropic
    API or an OpenAI-compatible server, each provider made when first used."""
    from wisp.models.route import RoutingModel, provider_entries, register_facts

    set_by = env_set_by(settings) if settings else {}

    def anthropic() -> Model:
        from wisp.models.anthropic import AnthropicConfig, AnthropicModel

        provider = AnthropicConfig.from_env(env, set_by=set_by)
        if betas:
            provider = AnthropicConfig(**{**provider.__dict__, "betas": betas})
        return AnthropicModel(provider, env)

    entries = provider_entries(settings.scalar("providers") if settings else None, env,
                               set_by=set_by, origin=providers_file(settings))
    register_facts(entries)
    if env.get("WISP_RECORD") or env.get("WISP_REPLAY"):
        from wisp.models.cassette import wrap_for_env

        return wrap_for_env(lambda: RoutingModel(anthropic, entries, env), env)
    return RoutingModel(anthropic, entries, env)


def project_context_blocks(project: ProjectContext | None) -> list[JSON]:
    """What the first user message of every request starts with: the memory files."""
    if project is None or not project.memory:
        return []
    from wisp.project.memory import memory_reminder

    text = memory_reminder(project.memory)
    return [{"type": "text", "text": text}] if text else []


def build_run(config: RuntimeConfig, sink: EventSink, env: Mapping[str, str],
              settings: Settings, model: Model | None = None, *,
              project: ProjectContext | None = None) -> tuple[RunContext, ToolRunState]:
    """The engine of one session: its context (session, config, model, hooks) and its tool
    state, sharing one permission policy (where the mode lives)."""
    # IS_SANDBOX (the root check) counts only from the launch environment: a repository's
    # settings `env` must not be able to relax it.
    mode = effective_mode(config, settings, config.env)
    policy = permission_policy(config, mode, settings, env)
    session = new_session(config, env, settings, policy)
    engine = engine_config(config, env, project, settings)
    model = model if model is not None else model_provider(env, config.betas, settings)
    ctx = RunContext(session=session, config=engine, model=model, sink=sink)
    from wisp.engine.tasks import TaskRegistry

    ctx.tasks = TaskRegistry(sink, lambda: (ctx.session.cwd, ctx.session.session_id))

    def hook_event(phase: str, fields: JSON) -> None:
        sink.emit(HookEvent(cast(HookPhase, phase), fields))

    matchers = hook_matchers(settings)
    if project is not None:
        matchers += plugin_hook_matchers(project)
    ctx.hooks = HookRunner(matchers, cwd=str(config.cwd), env=env,
                           include_events=config.include_hook_events, emit=hook_event)
    install_sandbox(config, ctx, settings, env)
    tool_state = ToolRunState(policy=policy)
    if config.permission_prompt_tool not in (None, "stdio"):
        tool_state.ask_host = mcp_permission_prompt(config.permission_prompt_tool, ctx)
    install_subagents(ctx, tool_state, config.agents_json,
                      file_agents=project.agents if project else None)
    if project is not None:
        install_skills(ctx, project)
    adopt_host_parts(config, ctx)
    return ctx, tool_state


def adopt_host_parts(config: RuntimeConfig, ctx: RunContext) -> None:
    """What a host that keeps the session itself handed in (`RuntimeConfig.history` and
    the rest) takes the place of what the engine made: last, so nothing built after
    overrides it."""
    session = ctx.session
    if config.history is not None:
        session.history = config.history
    if config.recorder is not None:
        session.recorder = config.recorder
    if config.sandbox is not None:
        ctx.config.sandbox = config.sandbox
        session.policy.sandbox = config.sandbox
    if config.host_tools is not None:
        ctx.config.tools = dict(config.host_tools)


def install_sandbox(config: RuntimeConfig, ctx: RunContext, settings: Settings,
                    env: Mapping[str, str]) -> None:
    """`sandbox.enabled`: every command the model runs in this session (its subagents'
    included) goes into one OS sandbox, and the permission judge knows it."""
    if not any("sandbox" in s.doc for s in settings.sources) and not settings.errors:
        return  # the common case, decided without loading the sandbox package
    from wisp.sandbox.config import sandbox_enabled

    if not sandbox_enabled(settings):
        return
    from wisp.sandbox.config import sandbox_config, warn_about
    from wisp.sandbox.session import build_sandbox

    wanted = sandbox_config(settings)
    warn_about(wanted)
    policy = ctx.session.policy
    sandbox = build_sandbox(wanted, cwd=config.cwd, working=policy.working_dirs(), env=env,
                            allow=lambda: policy.allow, deny=lambda: policy.deny)
    ctx.config.sandbox = sandbox
    policy.sandbox = sandbox


def plugin_hook_matchers(project: ProjectContext) -> list[HookMatcher]:
    from wisp.settings.apply import matchers_from

    return [m for name, hooks in project.plugin_hooks()
            for m in matchers_from(hooks, f"plugin:{name}")]


def install_skills(ctx: RunContext, project: ProjectContext) -> None:
    """Offers the Skill tool when there are skills, unless --tools or a bare deny of
    `Skill` left it out. It reads `project.skills` at each call, so a reload counts."""
    config = ctx.config
    grant_skill_folders(ctx.session.policy, project)
    if not project.skills or "Skill" in config.disabled_tools or not config.tools_selected(
            "Skill"):
        return
    from wisp.tools.skill import SkillTool

    config.tools["Skill"] = SkillTool(lambda: project.skills)


def grant_skill_folders(policy: PermissionPolicy, project: ProjectContext) -> None:
    """A loaded skill names its folder so the model can read its other files: reading
    them is allowed like loading the skill (installed configuration), at the lowest rank,
    so any deny or ask rule still wins. A reload replaces the grants."""
    stale = set(map(str, project.granted_reads))
    policy.allow = [r for r in policy.allow if r.rank != 0 or str(r) not in stale]
    project.granted_reads = [Rule.parse(f"Read({skill.folder}/**)", rank=0)
                             for skill in project.skills.values()]
    policy.allow += project.granted_reads


def install_subagents(ctx: RunContext, tool_state: ToolRunState, agents_json: str | None,
                      agents: dict[str, Any] | None = None, *,
                      file_agents: dict[str, Any] | None = None) -> None:
    """Offers the Task tool (unless --tools left it out) backed by a subagent runner.
    Definitions from files come first: `--agents` and initialize's `agents` replace a
    file's agent of the same name, as an explicit definition should."""
    from wisp.engine.subagents import SubagentRunner, load_agents_flag, parse_agents
    from wisp.tools.task import TaskTool

    explicit = load_agents_flag(agents_json) if agents_json else {}
    explicit.update(parse_agents(agents or {}))
    runner = SubagentRunner(ctx, tool_state, parse_agents(file_agents or {}), explicit)
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
                            state=session.tool_state, env=dict(ctx.config.env)))
