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


def effective_mode(opts: Options, settings: Settings) -> str:
    """The permission mode to start in: the command line beats settings' `defaultMode`."""
    if opts.permission_mode_set:
        return opts.permission_mode
    mode = settings.permission_scalar("defaultMode")
    return mode if isinstance(mode, str) else opts.permission_mode


def load_settings_for(opts: Options, env: Mapping[str, str]) -> Settings:
    """Loads and validates settings, warning on stderr about every skipped file."""
    from wisp.settings.loader import load_settings, warn_about

    settings = load_settings(opts.cwd, env, selected=opts.setting_sources, flag=opts.settings)
    warn_about(settings)
    if env is os.environ:
        os.environ.update(settings.merged_env())  # settings `env` applies to tools and hooks
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
