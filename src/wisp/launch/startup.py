"""Facts about the invocation, for the argv front ends: they live in `wisp.runtime.facts`
(import-light, shared with the runtime); this adds the argv-side settings loader."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.runtime.facts import (
    BYPASS,
    BYPASS_AS_ROOT,
    BYPASS_NOT_LAUNCHED,
    api_key_source,
    bypass_refusal,
    effective_mode,
    env_overlay,
    load_settings,
    missing_key,
    offered_tool_names,
    starting_model,
)

if TYPE_CHECKING:
    from wisp.launch.options import Options
    from wisp.settings.loader import Settings

__all__ = ["BYPASS", "BYPASS_AS_ROOT", "BYPASS_NOT_LAUNCHED", "api_key_source",
           "bypass_refusal", "effective_mode", "env_overlay", "load_settings_for",
           "missing_key", "offered_tool_names", "starting_model"]


def load_settings_for(opts: Options, env: Mapping[str, str]) -> Settings:
    """Loads and validates settings, warning on stderr about every skipped file. Settings'
    `env` is not applied to this process: `env_overlay` gives each session its own."""
    return load_settings(opts.runtime, env)
