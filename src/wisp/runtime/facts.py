"""Facts about a session that are cheap to work out: no engine, model or tool imports.

Shared by the runtime (which builds the engine), print mode's early `system/init` and the
duplex early initialize answer, which must reach stdout before the engine is imported.
They read a `LaunchFlags`: the runtime's `RuntimeConfig` (argv's `Options` carries one) is one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from wisp.errors import UsageError
from wisp.models.spec import missing_credentials, unknown_provider
from wisp.permissions.modes import BYPASS, PermissionMode, is_permission_mode
from wisp.settings.loader import SOURCE_RANK

if TYPE_CHECKING:
    from wisp.settings.loader import Settings

__all__ = ["BYPASS", "BYPASS_AS_ROOT", "BYPASS_NOT_LAUNCHED", "LaunchFlags", "api_key_source",
           "bypass_refusal", "checked_model", "configured_mcp_servers", "effective_mode",
           "env_overlay", "env_set_by", "load_settings", "missing_key", "offered_tool_names",
           "providers_file", "settings_providers", "starting_model"]


class LaunchFlags(Protocol):
    @property
    def cwd(self) -> Path: ...
    @property
    def model(self) -> str | None: ...
    @property
    def permission_mode(self) -> PermissionMode: ...
    @property
    def permission_mode_set(self) -> bool: ...
    @property
    def bypass_allowed(self) -> bool: ...
    @property
    def tools(self) -> tuple[str, ...] | None: ...
    @property
    def disallowed_tools(self) -> tuple[str, ...]: ...
    @property
    def json_schema(self) -> dict[str, Any] | None: ...
    @property
    def settings(self) -> str | None: ...
    @property
    def setting_sources(self) -> tuple[str, ...] | None: ...


def api_key_source(env: Mapping[str, str]) -> str:
    if env.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY"
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_AUTH_TOKEN"
    return "none"


def env_overlay(base: Mapping[str, str], settings: Settings) -> dict[str, str]:
    """The session's environment: the base (the process's, or what a host passed) with
    settings' `env` over it. Tools, hooks and MCP servers get it as their environment;
    nothing writes it into os.environ, so sessions in one process stay apart.
    `WISP_TRUST_PROJECT` vouches for this session's folder only: a nested wisp started
    by a tool in some other folder does not inherit it."""
    from wisp.settings.trust import TRUST_ENV

    env = {**base, **settings.merged_env()}
    env.pop(TRUST_ENV, None)
    return env


def starting_model(flags: LaunchFlags, settings: Settings, env: Mapping[str, str]) -> str:
    """The model to start with: `--model`, else settings' `model`, else the default
    (ANTHROPIC_MODEL). A provider prefix nobody defined is a UsageError."""
    from wisp.models.catalog import resolve_model

    configured = settings.scalar("model")
    return checked_model(resolve_model(
        flags.model or (configured if isinstance(configured, str) else None), env), settings)


def settings_providers(settings: Settings | None) -> list[str]:
    """The provider names settings' `providers` defines."""
    value = settings.scalar("providers") if settings is not None else None
    return [str(name) for name in value] if isinstance(value, dict) else []


def checked_model(spec: str, settings: Settings | None) -> str:
    """`spec`, unless its prefix looks like a provider that is neither built in nor in
    settings: then a UsageError listing the known ones (rather than sending `typo:model`
    to the Anthropic API)."""
    problem = unknown_provider(spec, settings_providers(settings))
    if problem is not None:
        raise UsageError(problem)
    return spec


def missing_key(model: str, settings: Settings, env: Mapping[str, str]) -> str | None:
    """Why `model`'s provider cannot be asked at all (`wisp.models.spec`), else None. A
    replayed run asks no provider."""
    if env.get("WISP_REPLAY"):
        return None
    return missing_credentials(model, env, settings_providers(settings),
                               key_helper=_first_path(settings, "apiKeyHelper"))


def env_set_by(settings: Settings) -> dict[str, str]:
    """Variable → the settings file whose `env` gave the session its value (the highest
    source wins, as in `env_overlay`)."""
    found: dict[str, str] = {}
    for source in sorted(settings.sources, key=lambda s: SOURCE_RANK[s.name]):
        for name in source.doc.get("env") or {}:
            found[name] = source.path or "--settings"
    return found


def providers_file(settings: Settings | None) -> str | None:
    """The settings file whose `providers` the session uses."""
    return None if settings is None else _first_path(settings, "providers")


def _first_path(settings: Settings, key: str) -> str | None:
    for source in sorted(settings.sources, key=lambda s: -SOURCE_RANK[s.name]):
        if key in source.doc:
            return source.path or "--settings"
    return None


BYPASS_NOT_LAUNCHED = (
    "Cannot set permission mode to bypassPermissions: the session was not launched with "
    "--dangerously-skip-permissions or --allow-dangerously-skip-permissions."
)
BYPASS_AS_ROOT = (
    "bypassPermissions cannot be used with root/sudo privileges unless IS_SANDBOX=1"
)


def bypass_refusal(bypass_allowed: bool, env: Mapping[str, str]) -> tuple[str, str] | None:
    """(message, error_code) when the session may not enter bypassPermissions now, else None.

    Only a launch flag opens bypass: a client's request, a permission answer or a settings
    file (which a repository may ship) cannot switch permission checks off on its own."""
    if not bypass_allowed:
        return BYPASS_NOT_LAUNCHED, "bypass_not_launched"
    if hasattr(os, "geteuid") and os.geteuid() == 0 and env.get("IS_SANDBOX") != "1":
        return BYPASS_AS_ROOT, "invalid_mode"
    return None


def effective_mode(flags: LaunchFlags, settings: Settings,
                   env: Mapping[str, str] | None = None) -> PermissionMode:
    """The permission mode to start in: the command line beats settings' `defaultMode`,
    and settings may name bypassPermissions only when the launch allowed it."""
    launched = flags.permission_mode
    # Typed, but a config built from JSON (serve) is not checked: "default" covers it.
    launched_mode: PermissionMode = launched if is_permission_mode(launched) else "default"
    if flags.permission_mode_set:
        return launched_mode
    mode = settings.permission_scalar("defaultMode")
    if not is_permission_mode(mode):
        return launched_mode
    env = os.environ if env is None else env
    if mode == BYPASS and bypass_refusal(flags.bypass_allowed, env) is not None:
        return launched_mode  # load_settings has warned about it
    return mode


def _warn_if_bypass_ignored(flags: LaunchFlags, settings: Settings,
                            env: Mapping[str, str]) -> None:
    if flags.permission_mode_set or settings.permission_scalar("defaultMode") != BYPASS:
        return
    refusal = bypass_refusal(flags.bypass_allowed, env)
    if refusal is not None:
        why = ("launch with --allow-dangerously-skip-permissions to permit it"
               if refusal[1] == "bypass_not_launched" else refusal[0])
        from wisp.diagnostics import warn

        warn(f"wisp: warning: ignoring permissions.defaultMode bypassPermissions from "
             f"settings: {why}\n")


def load_settings(flags: LaunchFlags, env: Mapping[str, str], *, warn: bool = True
                  ) -> Settings:
    """Loads and validates settings, warning on stderr about every skipped file."""
    from wisp.settings.loader import load_settings as load
    from wisp.settings.loader import warn_about

    settings = load(flags.cwd, env, selected=flags.setting_sources, flag=flags.settings)
    if warn:
        warn_about(settings)
        _warn_if_bypass_ignored(flags, settings, env)
        if settings.held_back:
            from wisp.diagnostics import warn as say
            from wisp.settings.untrusted import held_back_note

            say(held_back_note(settings, flags.cwd, env) or "")
    return settings


def offered_tool_names(flags: LaunchFlags, has_skills: bool = False) -> list[str]:
    """The tools the engine will offer, worked out without importing them (for an early
    `system/init`). `wisp.runtime.build` builds the same set; a test holds the two
    together. Skill is offered when the project has skills."""
    from wisp.tools.names import BUILTIN_TOOL_NAMES, ENGINE_TOOL_STRUCTURED, ENGINE_TOOL_TASK

    removed: set[str] = set()
    if flags.disallowed_tools:  # the rule parser loads only when there are rules
        from wisp.rules import Rule

        removed = {r.tool for r in map(Rule.parse, flags.disallowed_tools) if r.content is None}
    wanted = None if flags.tools is None else set(flags.tools)
    engine_tools = (ENGINE_TOOL_TASK, "Skill") if has_skills else (ENGINE_TOOL_TASK,)
    names = [n for n in (*BUILTIN_TOOL_NAMES, *engine_tools)
             if (wanted is None or n in wanted) and n not in removed]
    if flags.json_schema is not None:
        names.append(ENGINE_TOOL_STRUCTURED)
    return names


def configured_mcp_servers(mcp_config: tuple[str, ...], strict: bool, settings: Settings,
                           plugin_servers: dict[str, Any], *, cwd: Path | None = None,
                           env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The MCP servers a session starts with: a trusted project's `.mcp.json` and
    settings' `mcpServers` (neither with --strict-mcp-config; settings win a name clash),
    the plugins' servers, then `--mcp-config`'s, which win on a name clash. Bad
    `--mcp-config` JSON raises UsageError."""
    servers: dict[str, Any] = {}
    if not strict and cwd is not None and env is not None:
        from wisp.settings.project_mcp import project_mcp_servers

        servers.update(project_mcp_servers(cwd, env, settings))
    if not strict:
        servers.update(settings.mcp_servers())
    servers.update(plugin_servers)
    if mcp_config:
        from wisp.mcp.config import parse_mcp_configs

        servers.update(parse_mcp_configs(mcp_config))
    return servers
