"""The plain configuration a `Runtime` is built from: parsed values, no argv.

argv's `Options` (`wisp.launch.options`) holds one of these next to its front-end fields,
so a field is declared once; the start-up facts (`wisp.runtime.facts`) and session
resolution (`wisp.sessions.resume`) read it.
"""

# No `from __future__ import annotations` here, and a NamedTuple rather than a dataclass:
# argv builds one before the first frame (and before duplex answers `initialize`), where
# importing `dataclasses` alone costs tens of milliseconds. NamedTuple checks each field's
# annotation, and a string annotation costs a compile(); the first compile() of a process
# also builds the interpreter's AST types (~2 ms, ~10M instructions), which nothing else
# needs before the first frame. So no field's annotation is a string: the types that would
# load half of wisp are `object` at run time (below) and themselves only for mypy.
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from wisp.jsontypes import JSON
from wisp.permissions.modes import PermissionMode

if TYPE_CHECKING:
    from wisp.engine.session import TranscriptRecorder
    from wisp.project.context import ProjectContext
    from wisp.sandbox.runner import CommandSandbox
    from wisp.sessions.resume import SessionStart
    from wisp.settings.loader import Settings
    from wisp.tools.base import Tool
else:  # nothing checks these annotations at run time: any class will do
    TranscriptRecorder = ProjectContext = CommandSandbox = SessionStart = Settings = Tool = object

_NO_ENV: Mapping[str, str] = MappingProxyType({})


class RuntimeConfig(NamedTuple):
    cwd: Path
    # The base environment of the session (settings' `env` goes over it): what its tools,
    # hooks, MCP servers and model provider see. Never read from os.environ by the runtime.
    env: Mapping[str, str] = _NO_ENV
    model: str | None = None
    fallback_model: str | None = None
    tools: tuple[str, ...] | None = None  # None = all built-ins; () = none
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    add_dirs: tuple[str, ...] = ()
    system_prompt: str | None = None  # None = wisp's default; "" = empty, as the SDKs send
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    max_thinking_tokens: int | None = None
    thinking: str | None = None  # adaptive, enabled or disabled (wisp.models.shape)
    thinking_display: str | None = None
    effort: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False  # a foreground subagent's text reaches stream-json
    json_schema: JSON | None = None
    betas: tuple[str, ...] = ()
    permission_mode: PermissionMode = "default"
    permission_mode_set: bool = False  # given on the command line (beats settings)
    # Launched with --dangerously-skip-permissions, --allow-dangerously-skip-permissions or
    # --permission-mode bypassPermissions: only then may the session enter bypassPermissions
    # later (set_permission_mode, a settings defaultMode).
    bypass_allowed: bool = False
    permission_prompt_tool: str | None = None
    agents_json: str | None = None  # --agents: JSON text or a file path
    resume: str | None = None
    continue_session: bool = False
    fork_session: bool = False
    session_id: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    no_session_persistence: bool = False
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False  # only --mcp-config's servers, none from settings
    plugin_dirs: tuple[str, ...] = ()
    plugin_dirs_no_mcp: tuple[str, ...] = ()  # plugins whose MCP servers are not started
    settings: str | None = None  # --settings: a file or JSON text
    setting_sources: tuple[str, ...] | None = None
    # Worked out already by a front end that needed them early (print mode's init).
    loaded_settings: Settings | None = None
    project: ProjectContext | None = None
    start: SessionStart | None = None
    # A host that keeps the session itself (`wisp serve`) hands these in: the conversation
    # so far (the very list the session then extends), who records it instead of a
    # transcript, the tools the model is offered instead of the built-ins, and the OS
    # sandbox every command runs in instead of one the settings ask for.
    history: list[JSON] | None = None
    recorder: TranscriptRecorder | None = None
    host_tools: Mapping[str, Tool] | None = None
    sandbox: CommandSandbox | None = None

    @property
    def resumed(self) -> bool:
        return self.resume is not None or self.continue_session
