"""The plain configuration a `Runtime` is built from: parsed values, no argv.

Field names match argv's `Options` where they mean the same, so the start-up facts
(`wisp.runtime.facts`) and session resolution (`wisp.sessions.resume`) read either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext
    from wisp.sessions.resume import SessionStart
    from wisp.settings.loader import Settings

JSON = dict[str, Any]


@dataclass(frozen=True)
class RuntimeConfig:
    cwd: Path
    # The base environment of the session (settings' `env` goes over it): what its tools,
    # hooks, MCP servers and model provider see. Never read from os.environ by the runtime.
    env: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    fallback_model: str | None = None
    tools: tuple[str, ...] | None = None  # None = all built-ins
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    add_dirs: tuple[str, ...] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    max_thinking_tokens: int | None = None
    thinking: str | None = None
    thinking_display: str | None = None
    effort: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    json_schema: JSON | None = None
    betas: tuple[str, ...] = ()
    permission_mode: str = "default"
    permission_mode_set: bool = False
    bypass_allowed: bool = False
    permission_prompt_tool: str | None = None
    agents_json: str | None = None
    resume: str | None = None
    continue_session: bool = False
    fork_session: bool = False
    session_id: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    no_session_persistence: bool = False
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False
    plugin_dirs: tuple[str, ...] = ()
    plugin_dirs_no_mcp: tuple[str, ...] = ()
    settings: str | None = None  # --settings: a file or JSON text
    setting_sources: tuple[str, ...] | None = None
    # Worked out already by a front end that needed them early (print mode's init).
    loaded_settings: Settings | None = None
    project: ProjectContext | None = None
    start: SessionStart | None = None

    @property
    def resumed(self) -> bool:
        return self.resume is not None or self.continue_session
