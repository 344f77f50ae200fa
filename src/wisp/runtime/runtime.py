"""`Runtime`: one session of wisp, driven by any front end.

Above: a front end (print mode, the duplex server, a test, an embedding program) that
turns its input into calls here and renders the events its `EventSink` receives. Below:
the engine, built once from a `RuntimeConfig`. The runtime owns what is per session and
must not leak into the process: the environment overlay (nothing writes os.environ), the
cwd (nothing calls os.chdir), the child processes (killed on interrupt and close), the
MCP servers, the session hooks and the transcript.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from wisp import paths
from wisp.diagnostics import warn
from wisp.engine.events import (
    ConversationReset,
    EventSink,
    LocalCommandOutput,
    RunFinished,
    StatusChanged,
)
from wisp.engine.outcome import Failed, Outcome, RunState, Success, run_stats
from wisp.engine.session import Session
from wisp.engine.tool_calls import AskHost
from wisp.errors import UsageError
from wisp.hooks.runner import CallbackTransport
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.permissions.modes import PermissionMode
from wisp.runtime.build import build_run
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.facts import checked_model, configured_mcp_servers, env_overlay, load_settings
from wisp.runtime.project import open_project
from wisp.runtime.quiet import QuietTurns
from wisp.runtime.session_verbs import SessionStateVerbs
from wisp.runtime.verbs import SessionVerbs
from wisp.sessions.transcript import TranscriptWriter
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.commands.prompts import LocalCommand
    from wisp.engine.tasks import TaskRegistry
    from wisp.mcp.hub import McpHub
    from wisp.models.base import Model
    from wisp.project.context import ProjectContext
    from wisp.sessions.checkpoints import FileHistory
    from wisp.tools.editor_files import EditorFiles, EditorTerminals

McpSend = Callable[[str, JSON], Awaitable[JSON]]
TurnState = Literal["idle", "claimed", "doomed"]
SessionPhase = Literal["new", "started", "ended"]
NOT_STARTED = "The turn was interrupted before it could end."


class Runtime(SessionVerbs, SessionStateVerbs, QuietTurns):
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

    @property
    def running(self) -> bool:
        return self._current is not None and not self._current.done()

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

    # Running -------------------------------------------------------------------------

    async def prepare(self) -> None:
        """SessionStart hooks (once) and pending MCP servers: what a turn needs first. A
        front end that reports something between that and the run calls it itself."""
        if self._phase == "new":
            from wisp.engine.hook_points import session_start

            self._phase = "started"
            source = self._start_source or ("resume" if self.config.resumed else "startup")
            await session_start(self.ctx, source)
        await self.connect_mcp()

    def claim(self) -> None:
        """A front end took a prompt that will run: an interrupt from now on ends it,
        even one that comes before `run_prompt` starts its loop."""
        if self._turn == "idle":
            self._turn = "claimed"

    async def run_prompt(self, content: str | list[JSON], *, uuid: str | None = None,
                         announce: Callable[[], None] | None = None) -> Outcome:
        """Runs one prompt to its end. Every run, however it ends, emits one
        `RunFinished`; a configuration error found mid-run (UsageError) is raised after.

        `uuid` names the prompt's message (a client's own, or a new one): its transcript
        line and its file checkpoint. A prompt naming a built-in slash command (/compact,
        /clear) runs that instead of the model; a custom command is expanded first
        (`wisp.commands.prompts`). `announce` is called once the turn's session is known,
        before anything else is reported (the duplex front end's `system/init`): after
        /clear's reset, at the start otherwise."""
        from wisp.commands.prompts import expand_prompt, local_command
        from wisp.engine.loop import AgentLoop

        uuid = uuid or new_uuid()
        command = local_command(content)
        if command is not None:
            return await self._run_local(command, uuid, announce)
        if announce is not None:
            announce()
        content = expand_prompt(content, self.config.cwd, paths.config_dir(self.env),
                                self.project)
        if self.checkpoints is not None:
            self.checkpoints.snapshot(uuid)
        started = time.monotonic()
        recorder = self.session.recorder
        if isinstance(recorder, TranscriptWriter):
            recorder.begin_prompt(content)  # `last-prompt` lines for the SDKs' listings
        try:
            return await self._run_turn(
                lambda: AgentLoop(self.ctx, self.tool_state).run(content, uuid), started)
        finally:
            if isinstance(recorder, TranscriptWriter):
                recorder.end_turn()

    @property
    def tasks(self) -> TaskRegistry:
        """The session's subagents and background commands (`wisp.engine.tasks`)."""
        assert self.ctx.tasks is not None  # build_run makes it
        return self.ctx.tasks

    async def run_notifications(self, *, announce: Callable[[], None] | None = None
                                ) -> Outcome | None:
        """A turn for background tasks that ended while no prompt was running: the model
        reads their notices (no UserPromptSubmit hooks) and the result says what started
        it (`origin`). None when no notice is owed. Front ends call it when
        `tasks.has_wake()`, between prompts and after the last one."""
        from wisp.engine.loop import AgentLoop

        notices = self.tasks.take_notices()
        if not notices:
            return None
        if announce is not None:
            announce()
        text = "\n\n".join(n.text for n in notices)
        origin = {"kind": "task-notification", "producer": "session-task",
                  "runId": notices[-1].run_id}
        return await self._run_turn(
            lambda: AgentLoop(self.ctx, self.tool_state).run(text, origin=origin),
            time.monotonic())

    async def _run_local(self, command: LocalCommand, uuid: str,
                         announce: Callable[[], None] | None) -> Outcome:
        """A built-in slash command's turn: no model reply, a result of its own."""
        started = time.monotonic()
        return await self._run_turn(lambda: self._local(command, uuid, announce, started),
                                    started)

    async def _run_turn(self, work: Callable[[], Coroutine[Any, Any, Outcome]],
                        started: float) -> Outcome:
        """Every kind of turn starts here: claimed (an interrupt from now on ends it),
        SessionStart hooks and MCP servers made ready, then `work()` as the running task,
        cancelled before it begins when an interrupt came meanwhile ("doomed")."""
        if self._turn == "idle":
            self._turn = "claimed"
        try:
            await self.prepare()
            task = self._current = asyncio.ensure_future(work())
            if self._turn == "doomed":
                task.cancel()  # never starts: it ends with an interrupted result
            return await self._await(task, started)
        finally:
            self._current = None
            self._turn = "idle"

    async def _local(self, command: LocalCommand, uuid: str,
                     announce: Callable[[], None] | None, started: float) -> Outcome:
        from wisp.engine.usage import UsageLedger

        if command.name == "clear":
            await self.clear(uuid)
            if announce is not None:
                announce()
        else:
            if announce is not None:
                announce()
            await self._compact_command(command.args)
        outcome = Success("")
        stats = run_stats(RunState(started=started), UsageLedger(), self.session.usage)
        self.sink.emit(RunFinished(outcome, stats, local_command=command.name))
        return outcome

    async def _compact_command(self, args: str) -> None:
        """/compact [instructions]: reports "Compacted" or why it could not."""
        from wisp.engine.compaction import attempt, context_tokens

        last = self.session.last_usage
        why = await attempt(self.ctx, "manual", args or None,
                            context_tokens(last) if last else 0)
        if why is None:
            self.session.last_usage = None
            self.sink.emit(LocalCommandOutput("compact", args, "Compacted"))
        else:
            self.sink.emit(LocalCommandOutput("compact", args, f"Error: {why}", failed=True))

    async def _await(self, task: asyncio.Task[Outcome], started: float) -> Outcome:
        try:
            return await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # the caller itself is being cancelled
            return self._failed(NOT_STARTED, started)
        except UsageError as exc:
            self._failed(str(exc), started)
            raise
        except Exception as exc:  # a bug must not hang a session: it becomes this result
            warn(traceback.format_exc())
            return self._failed(f"Internal error: {exc!r}", started)

    def _failed(self, message: str, started: float) -> Outcome:
        outcome = Failed(message)
        stats = run_stats(RunState(started=started), self.ctx.run_usage, self.session.usage)
        self.sink.emit(RunFinished(outcome, stats))
        return outcome

    def interrupt(self, cancel_queued: bool = False) -> None:
        """Ends the running turn: its processes die and it ends with an Aborted outcome.
        Prompts queued behind it belong to the front end (`cancel_queued` is its
        business); here it changes nothing. `run_until_quiet` runs no further turn."""
        self._quiet_end()
        task = self._current
        if task is None or task.done():
            # Still getting ready (initialize, MCP handshake): that turn must not run.
            if self._turn == "claimed":
                self._turn = "doomed"
            return
        self.session.abort.set()
        self.session.processes.kill_all()
        if asyncio.current_task() is not task:
            task.cancel()
        # From inside the turn (a host's deny with `interrupt`) the task can't cancel
        # itself cleanly; the loop sees `abort` at its next tool boundary instead.

    def hard_interrupt(self) -> bool:
        """A signal's interrupt: every process of the session dies and background work
        ends (no turn waits for it any more), then the turn ends as `interrupt` ends it.
        Returns whether a turn was running (if not, nothing will end with a result)."""
        running = self.running
        self.session.abort.set()
        self.session.processes.kill_all()
        self.tasks.end_all()
        self.interrupt()
        return running

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
