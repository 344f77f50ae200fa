"""Facts about the invocation that are cheap to work out: no engine, model or tool imports.

Shared by the engine setup (`wisp.cli.setup`) and the duplex session's early initialize
answer (`wisp.duplex.early`), which must reach stdout before the engine is even imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wisp.cli.options import Options
    from wisp.settings.loader import Settings


def api_key_source(env: Mapping[str, str]) -> str:
    if env.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY"
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_AUTH_TOKEN"
    return "none"


def starting_model(opts: Options, settings: Settings, env: Mapping[str, str]) -> str:
    """The model to start with: `--model`, else settings' `model`, else the default."""
    from wisp.models.catalog import resolve_model

    configured = settings.scalar("model")
    return resolve_model(opts.model or (configured if isinstance(configured, str) else None),
                         env)


BYPASS = "bypassPermissions"
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


def effective_mode(opts: Options, settings: Settings,
                   env: Mapping[str, str] | None = None) -> str:
    """The permission mode to start in: the command line beats settings' `defaultMode`,
    and settings may name bypassPermissions only when the launch allowed it."""
    if opts.permission_mode_set:
        return opts.permission_mode
    mode = settings.permission_scalar("defaultMode")
    if not isinstance(mode, str):
        return opts.permission_mode
    env = os.environ if env is None else env
    if mode == BYPASS and bypass_refusal(opts.bypass_allowed, env) is not None:
        return opts.permission_mode  # load_settings_for has warned about it
    return mode


def _warn_if_bypass_ignored(opts: Options, settings: Settings, env: Mapping[str, str]) -> None:
    if opts.permission_mode_set or settings.permission_scalar("defaultMode") != BYPASS:
        return
    refusal = bypass_refusal(opts.bypass_allowed, env)
    if refusal is not None:
        why = ("launch with --allow-dangerously-skip-permissions to permit it"
               if refusal[1] == "bypass_not_launched" else refusal[0])
        os.write(2, f"wisp: warning: ignoring permissions.defaultMode bypassPermissions from "
                    f"settings: {why}\n".encode())


def load_settings_for(opts: Options, env: Mapping[str, str]) -> Settings:
    """Loads and validates settings, warning on stderr about every skipped file."""
    from wisp.settings.loader import load_settings, warn_about

    settings = load_settings(opts.cwd, env, selected=opts.setting_sources, flag=opts.settings)
    warn_about(settings)
    if env is os.environ:
        os.environ.update(settings.merged_env())  # settings `env` applies to tools and hooks
    _warn_if_bypass_ignored(opts, settings, env)
    return settings


def offered_tool_names(opts: Options) -> list[str]:
    """The tools the engine will offer, worked out without importing them (for an early
    `system/init`). `cli.setup` builds the same set; a test holds the two together."""
    from wisp.permissions.rules import Rule
    from wisp.tools.names import BUILTIN_TOOL_NAMES, ENGINE_TOOL_STRUCTURED, ENGINE_TOOL_TASK

    removed = {r.tool for r in map(Rule.parse, opts.disallowed_tools) if r.content is None}
    wanted = None if opts.tools is None else set(opts.tools)
    names = [n for n in (*BUILTIN_TOOL_NAMES, ENGINE_TOOL_TASK)
             if (wanted is None or n in wanted) and n not in removed]
    if opts.json_schema is not None:
        names.append(ENGINE_TOOL_STRUCTURED)
    return names
