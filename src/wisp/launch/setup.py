"""From argv's `Options` to the `RuntimeConfig` a session opens: the one argv carries, with
what start-up worked out (the environment, settings, the session start, the project).
The only thing the argv front ends know about building an engine (`wisp.runtime` does
the building)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.launch.options import Options
from wisp.runtime.config import RuntimeConfig

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext
    from wisp.sessions.resume import SessionStart
    from wisp.settings.loader import Settings


def runtime_config(opts: Options, env: Mapping[str, str], *, settings: Settings | None = None,
                   start: SessionStart | None = None,
                   project: ProjectContext | None = None) -> RuntimeConfig:
    """`env` is the process's environment as the session's base (settings' `env` goes over
    it in the runtime)."""
    return opts.runtime._replace(env=dict(env), loaded_settings=settings, start=start,
                                 project=project)
