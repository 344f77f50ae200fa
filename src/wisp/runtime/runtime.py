"""`Runtime`: one session of wisp, driven by any front end.

Above: a front end (print mode, the duplex server, a test, an embedding program) that
turns its input into calls here and renders the events its `EventSink` receives. Below:
the engine, built once from a `RuntimeConfig`. The runtime owns what is per session and
must not leak into the process: the environment overlay (nothing writes os.environ), the
cwd (nothing calls os.chdir), the child processes (killed on interrupt and close), the
MCP servers, the session hooks and the transcript. How it runs a turn (claim, prepare,
run, interrupt) is its base class `RuntimeTurns` (`runtime/turns.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from wisp import paths
from wisp.engine.events import ConversationReset, EventSink, StatusChanged
from wisp.engine.outcome import Outcome
from wisp.engine.session import Session
from wisp.engine.tool_calls import AskHost
from wisp.hooks.runner import CallbackTransport
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.permissions.modes import PermissionMode
from wisp.runtime.build import build_run
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.facts import checked_model, configured_mcp_servers, env_overlay, load_settings
from wisp.runtime.project import open_project
from wisp.runtime.session_verbs import SessionStateVerbs
from wisp.runtime.turns import RuntimeTurns, SessionPhase, TurnState
from wisp.runtime.verbs import SessionVerbs
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.mcp.hub import McpHub
    from wisp.models.base import Model
    from wisp.project.context import ProjectContext
    from wisp.sessions.checkpoints import FileHistory
    from wisp.tools.editor_files import EditorFiles, EditorTerminals

McpSend = Callable[[str, JSON], Awaitable[JSON]]


class Runtime(SessionVerbs, SessionStateVerbs, RuntimeTurns):
    def __init__(self, config: RuntimeConfig, sink: EventSink, *,
                 mcp_send: McpSend | None = None, model: Model | None = None) -> None:
        self.config = config
        self.sink = sink
        self.settings = (config.loaded_settings if config.loaded_settings is not None
                         else load_settings(config, config.env))
        self.env: dict[str, str] = env_overlay(config.env, self.settings)
        # Who asks the user when an MCP server elicits (the duplex server's host).
        self.mcp_elicit: Callable[[str, JSON], Awaitable[JSON]] | None = None
        # CLAUDE.md memory, file agents, skills, output style and plugins.
        self.project: ProjectContext = (config.project if config.project is not None
                                        else open_project(config, self.env, self.settings))
        self.ctx, self.tool_state = build_run(config, sink, self.env, self.settings, model,
                                              project=self.project)
        self.base_tools = dict(self.ctx.config.tools)  # before MCP servers add theirs
        self._mcp_send = mcp_send
        self._mcp: McpHub | None = None
        self._configured_mcp = configured_mcp_servers(
            config.mcp_config, config.strict_mcp_config, self.settings,
            self.project.plugin_mcp_servers(), cwd=config.cwd, env=self.env)
        if self._configured_mcp:
            self._mcp = self.mcp  # configured servers: connected before the first turn
        self._current: asyncio.Task[Outcome] | None = None
        # The turn: "claimed" once a front end took a prompt that will run (an interrupt
        # ends it from then on), "doomed" when interrupted before its loop started.
        self._turn: TurnState = "idle"
        # SessionStart hooks run before the first turn ("started"), SessionEnd once.
        self._phase: SessionPhase = "new"
        self._closed = False
        self._start_source: str | None = None  # SessionStart's `source` after /clear
        self.checkpoints: FileHistory | None = None
        self._open_checkpoints()

    @classmethod
    def open(cls, config: RuntimeConfig, sink: EventSink, *,
             mcp_send: McpSend | None = None, model: Model | None = None) -> Runtime:
        """`model` replaces the provider the environment would choose (in-process tests
        pass `wisp.testing.ScriptedModel` or `FunctionModel`)."""
        return cls(config, sink, mcp_send=mcp_send, model=model)

    @property
    def session(self) -> Session:
        return self.ctx.session

    @property
    def mcp(self) -> McpHub:
        """The session's MCP servers. Made on first use: a plain run never loads MCP
        support (it costs start-up time)."""
        if self._mcp is None:
            from wisp.mcp.hub import McpHub
            from wisp.runtime.elicitation import Elicitor

            self._mcp = McpHub(self._mcp_send, cwd=self.config.cwd, environ=self.env)
            self._mcp.add_configured(self._configured_mcp)
            self._mcp.on_tools_changed = self.tools_changed
            self._mcp.elicit = Elicitor(self)
            self._mcp.roots = self.session.policy.working_dirs
        return self._mcp

    def sandbox_status(self) -> JSON | None:
        """The OS sandbox in force for the model's commands (None: off)."""
        sandbox = self.ctx.config.sandbox
        return sandbox.status() if sandbox is not None else None

    def mcp_status(self) -> list[JSON]:
        """The MCP servers' status, without starting MCP support when there are none."""
        return self._mcp.status() if self._mcp is not None else []

    def connect_host(self, can_use_tool: AskHost | None,
                     hook_callback: CallbackTransport | None = None) -> None:
        """A host answers permission prompts (an SDK over its control channel, the
        terminal UI's dialog) and, over a control channel, SDK hook callbacks."""
        if can_use_tool is not None:
            self.tool_state.ask_host = can_use_tool
        if hook_callback is not None:
            assert self.ctx.hooks is not None  # build_run installs the settings hooks
            self.ctx.hooks.callback = hook_callback

    def use_editor_files(self, files: EditorFiles | None) -> None:
        """Read, Write and Edit go through an editor's buffers (`wisp acp` with a client
        that offers its file system) instead of the disk; None: the disk again."""
        self.ctx.config.editor_files = files

    def use_editor_terminals(self, terminals: EditorTerminals | None) -> None:
        """Bash runs its commands in the editor's terminals (`wisp acp` with a client that
        offers them), except those the OS sandbox holds; None: here again."""
        self.ctx.config.editor_terminals = terminals

    # Controls ------------------------------------------------------------------------

    def set_model(self, model: str | None) -> str:
        """An alias, a spec, or None (the default). A provider prefix nobody defined is a
        UsageError, and the model stays as it was."""
        self.session.model = checked_model(catalog.resolve_model(model, self.env), self.settings)
        return self.session.model

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """The mode lives on the permission policy. The change is reported just after
        whoever asked for it has had its answer."""
        self.session.permission_mode = mode
        asyncio.get_running_loop().call_soon(self.sink.emit, StatusChanged(None, mode))

    async def clear(self, user_message_uuid: str | None = None) -> None:
        """/clear: a fresh conversation in this process. A new session id and transcript,
        an empty history, cost from zero, new file checkpoints; settings, model, mode,
        tools, MCP servers and hooks stay. SessionEnd hooks (reason "clear") run for the
        old conversation, SessionStart (source "clear") for the new one."""
        from wisp.engine.usage import UsageLedger
        from wisp.sessions.resume import SessionStart

        await self.end_session("clear")
        session = self.session
        close = getattr(session.recorder, "close", None)
        if callable(close):
            close()
        session.session_id = new_uuid()
        session.history = []
        session.usage = UsageLedger()
        session.last_usage = None
        session.last_message_uuid = None
        session.tool_state.clear()  # todos, files read: they belonged to that conversation
        if session.recorder is not None:
            path = paths.transcript_file(self.env, self.config.cwd, session.session_id)
            start = SessionStart(session.session_id, path, [], None, [])
            session.recorder = start.writer(self.config.cwd, self.env)
            session.transcript_path = str(path)
        self._open_checkpoints()
        self.sink.emit(ConversationReset(session.session_id, user_message_uuid))
        self._phase = "new"
        self._start_source = "clear"
        await self.prepare()

    def rewind_files(self, user_message_id: object, dry_run: bool = False) -> JSON:
        """`rewind_files`: the files as they were when that user message was sent (see
        `wisp.sessions.checkpoints`). `canRewind: false` with the error when checkpoints
        are off or the message has none."""
        from wisp.sessions.checkpoints import NOT_ENABLED

        if self.checkpoints is None:
            return {"canRewind": False, "error": NOT_ENABLED}
        return self.checkpoints.rewind(user_message_id, dry_run)

    def _open_checkpoints(self) -> None:
        """File checkpoints for this session, when the SDK's option turned them on."""
        self.checkpoints = None
        if self.env.get("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"):
            from wisp.sessions import checkpoints

            if checkpoints.enabled(self.env):
                folder = paths.config_dir(self.env) / "file-history" / self.session.session_id
                self.checkpoints = checkpoints.FileHistory(folder)
        self.ctx.config.checkpoints = self.checkpoints

    async def compact(self, instructions: str | None = None) -> bool:
        """A manual compaction between turns (/compact): the conversation so far becomes
        a model-written summary. False when there is nothing to compact, a PreCompact
        hook vetoed, or the model failed (a `CompactionFailed` event says why)."""
        from wisp.engine.compaction import compact, context_tokens

        await self.prepare()
        last = self.session.last_usage
        return await compact(self.ctx, "manual", instructions,
                             context_tokens(last) if last else 0)

    def rename(self, title: str) -> bool:
        """Names the session in its transcript (what /resume and the SDKs' listings show);
        False when nothing is recorded (--no-session-persistence)."""
        from wisp.sessions.transcript import TranscriptWriter

        recorder = self.session.recorder
        if not isinstance(recorder, TranscriptWriter):
            return False
        recorder.set_title(title)
        return True

    async def connect_mcp(self, local_only: bool = False) -> None:
        if self._mcp is not None and await self._mcp.connect_pending(local_only):
            self.tools_changed()

    def tools_changed(self) -> None:
        """The tool set changed (an MCP server connected, reconnected or was toggled; a
        tool was removed): the next model call offers the new set."""
        tools = dict(self.base_tools)
        if self._mcp is not None:
            tools.update({t.name: t for t in self._mcp.tools(self.ctx.config.disabled_tools)})
        self.ctx.config.tools = tools

    # Ending --------------------------------------------------------------------------

    async def end_session(self, reason: str = "other") -> None:
        """SessionEnd hooks, once, if the session started."""
        if self._phase == "started":
            from wisp.engine.hook_points import session_end

            self._phase = "ended"
            await session_end(self.ctx, reason)

    async def aclose(self) -> None:
        """Ends the session: a running turn is interrupted and let finish, then SessionEnd
        hooks, MCP servers closed politely (stdin EOF), and every process this session's
        tools left running. Other runtimes in the process are untouched."""
        if self._closed:
            return
        self._closed = True
        self._quiet_end()  # no turn for background work after this
        task = self._current
        if task is not None and not task.done() and task is not asyncio.current_task():
            self.interrupt()
            await asyncio.wait({task})
        if self.ctx.tasks is not None:
            await self.ctx.tasks.aclose()  # background work ends with the session
        await self.end_session()
        if self.ctx.hooks is not None:
            await self.ctx.hooks.background.aclose()  # their process groups die too
        if self._mcp is not None:
            await self._mcp.close()
        self.session.processes.kill_all()
        if self.ctx.config.sandbox is not None:
            self.ctx.config.sandbox.close()
        close = getattr(self.session.recorder, "close", None)
        if callable(close):
            close()
