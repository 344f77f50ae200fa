"""From argv's `Options` to the runtime's plain `RuntimeConfig`: the only thing `cli/`
knows about building an engine (`wisp.runtime` does the building)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.launch.options import Options
from wisp.runtime.config import RuntimeConfig

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext
    from wisp.sessions.resume import SessionStart
    from wisp.settings.loader import Settings

_SHARED = tuple(f.name for f in dataclasses.fields(RuntimeConfig) if f.name in Options._fields)


def runtime_config(opts: Options, env: Mapping[str, str], *, settings: Settings | None = None,
                   start: SessionStart | None = None,
                   project: ProjectContext | None = None) -> RuntimeConfig:
    """`env` is the process's environment as the session's base (settings' `env` goes over
    it in the runtime)."""
    shared = {name: getattr(opts, name) for name in _SHARED}
    return RuntimeConfig(**shared, env=dict(env), loaded_settings=settings, start=start,
                         project=project)
