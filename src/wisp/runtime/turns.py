"""How a `Runtime` runs its turns: a base class of `Runtime`, kept apart so that
`runtime.py` is the session (what it is built from, its controls, its end).

A front end claims a turn (`claim`), then runs a prompt (`run_prompt`), a built-in slash
command's turn, or a turn for background tasks' notices (`run_notifications`). Every
kind of turn starts in `_run_turn`: SessionStart hooks and MCP servers made ready
(`prepare`), then the work as the running task, which `interrupt` cancels and
`hard_interrupt` ends with every process of the session. However a turn ends, it emits
one `RunFinished`.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from wisp import paths
from wisp.diagnostics import warn
from wisp.engine.events import EventSink, LocalCommandOutput, RunFinished
from wisp.engine.outcome import Failed, Outcome, RunState, Success, run_stats
from wisp.errors import UsageError
from wisp.jsontypes import JSON
from wisp.runtime.quiet import QuietTurns
from wisp.sessions.transcript import TranscriptWriter
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.commands.prompts import LocalCommand
    from wisp.engine.context import RunContext
    from wisp.engine.session import Session
    from wisp.engine.tasks import TaskRegistry
    from wisp.engine.tool_calls import ToolRunState
    from wisp.project.context import ProjectContext
    from wisp.runtime.config import RuntimeConfig
    from wisp.sessions.checkpoints import FileHistory

TurnState = Literal["idle", "claimed", "doomed"]
SessionPhase = Literal["new", "started", "ended"]
NOT_STARTED = "The turn was interrupted before it could end."


class RuntimeTurns(QuietTurns):
    """A base class of `Runtime` (which builds what is declared here)."""

    config: RuntimeConfig
    sink: EventSink
    env: dict[str, str]
    project: ProjectContext
    ctx: RunContext
    tool_state: ToolRunState
    checkpoints: FileHistory | None
    _current: asyncio.Task[Outcome] | None
    # The turn: "claimed" once a front end took a prompt that will run (an interrupt
    # ends it from then on), "doomed" when interrupted before its loop started.
    _turn: TurnState
    # SessionStart hooks run before the first turn ("started"), SessionEnd once.
    _phase: SessionPhase
    _start_source: str | None  # SessionStart's `source` after /clear

    if TYPE_CHECKING:  # what `Runtime` gives
        @property
        def session(self) -> Session: ...

        async def connect_mcp(self, local_only: bool = False) -> None: ...

        async def clear(self, user_message_uuid: str | None = None) -> None: ...

    @property
    def running(self) -> bool:
        return self._current is not None and not self._current.done()

    async def prepare(self) -> None:
        """SessionStart hooks (once) and pending MCP servers: what a turn needs first. A
        front end that reports something between that and the run calls it itself."""
        if self._phase == "new":
            from wisp.engine.hook_points import session_start

            self._phase = "started"
            source = self._start_source or ("resume" if self.config.resumed else "startup")
            await session_start(self.ctx, source)
        await self.connect_mcp()

    def warm_up(self) -> None:
        """Pays, while the session waits for its first prompt, what that prompt would pay
        once: the provider's modules, the tool definitions' and system blocks' JSON, the
        device id. The request the next turn would send (less its prompt) is built and
        encoded, not sent. Never raises: what fails here fails again in the turn, which
        reports it."""
        from contextlib import suppress

        with suppress(Exception):
            from wisp.engine.next_request import build_request

            request = build_request(self.ctx)
            warm = getattr(self.ctx.model, "warm", None)  # providers that can get ready
            if callable(warm):
                warm(request)

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
