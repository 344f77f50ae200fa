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
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from wisp.diagnostics import warn
from wisp.engine.events import EventSink, RunFinished, StatusChanged
from wisp.engine.outcome import Failed, Outcome, RunState, run_stats
from wisp.engine.session import Session
from wisp.engine.tool_calls import AskHost
from wisp.errors import UsageError
from wisp.hooks.runner import CallbackTransport
from wisp.models import catalog
from wisp.permissions.modes import PermissionMode
from wisp.runtime.build import build_run, thinking_config
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.facts import env_overlay, load_settings

if TYPE_CHECKING:
    from wisp.mcp.hub import McpHub
    from wisp.models.base import Model

JSON = dict[str, Any]
McpSend = Callable[[str, JSON], Awaitable[JSON]]
NOT_STARTED = "The turn was interrupted before it could end."


class Runtime:
    def __init__(self, config: RuntimeConfig, sink: EventSink, *,
                 mcp_send: McpSend | None = None, model: Model | None = None) -> None:
        self.config = config
        self.sink = sink
        self.settings = (config.loaded_settings if config.loaded_settings is not None
                         else load_settings(config, config.env))
        self.env: dict[str, str] = env_overlay(config.env, self.settings)
        self.ctx, self.tool_state = build_run(config, sink, self.env, self.settings, model)
        self.base_tools = dict(self.ctx.config.tools)  # before MCP servers add theirs
        self._mcp_send = mcp_send
        self._mcp: McpHub | None = None
        if config.mcp_config:
            self._mcp = self.mcp  # configured servers: connected before the first turn
        self._current: asyncio.Task[Outcome] | None = None
        self._claimed = False  # a prompt was taken and will run: an interrupt ends it
        self._doomed = False  # interrupted after being claimed, before its loop started
        self._started = False
        self._ended = False
        self._closed = False

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
            from wisp.mcp.config import parse_mcp_configs
            from wisp.mcp.hub import McpHub

            self._mcp = McpHub(self._mcp_send, cwd=self.config.cwd, environ=self.env)
            self._mcp.add_configured(parse_mcp_configs(self.config.mcp_config))
            self._mcp.on_tools_changed = self.tools_changed
        return self._mcp

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

    # Running -------------------------------------------------------------------------

    async def prepare(self) -> None:
        """SessionStart hooks (once) and pending MCP servers: what a turn needs first. A
        front end that reports something between that and the run calls it itself."""
        if not self._started:
            from wisp.engine.hook_points import session_start

            self._started = True
            await session_start(self.ctx, "resume" if self.config.resumed else "startup")
        await self.connect_mcp()

    def claim(self) -> None:
        """A front end took a prompt that will run: an interrupt from now on ends it,
        even one that comes before `run_prompt` starts its loop."""
        self._claimed = True

    async def run_prompt(self, content: str | list[JSON]) -> Outcome:
        """Runs one prompt to its end. Every run, however it ends, emits one
        `RunFinished`; a configuration error found mid-run (UsageError) is raised after."""
        from wisp.engine.loop import AgentLoop

        started = time.monotonic()
        self._claimed = True
        try:
            await self.prepare()
            task = self._current = asyncio.ensure_future(
                AgentLoop(self.ctx, self.tool_state).run(content))
            if self._doomed:
                task.cancel()  # never starts: it ends with an interrupted result
            return await self._await(task, started)
        finally:
            self._current = None
            self._claimed = self._doomed = False

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
        business); here it changes nothing."""
        task = self._current
        if task is None or task.done():
            # Still getting ready (initialize, MCP handshake): that turn must not run.
            self._doomed = self._claimed
            return
        self.session.abort.set()
        self.session.processes.kill_all()
        if asyncio.current_task() is not task:
            task.cancel()
        # From inside the turn (a host's deny with `interrupt`) the task can't cancel
        # itself cleanly; the loop sees `abort` at its next tool boundary instead.

    # Controls ------------------------------------------------------------------------

    def set_model(self, model: str | None) -> str:
        self.session.model = catalog.resolve_model(model, self.env)
        return self.session.model

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """The mode lives on the permission policy. The change is reported just after
        whoever asked for it has had its answer."""
        self.session.permission_mode = mode
        asyncio.get_running_loop().call_soon(self.sink.emit, StatusChanged(None, mode))

    async def compact(self, instructions: str | None = None) -> bool:
        """A manual compaction between turns (/compact): the conversation so far becomes
        a model-written summary. False when there is nothing to compact, a PreCompact
        hook vetoed, or the model failed (a `CompactionFailed` event says why)."""
        from wisp.engine.compaction import compact, context_tokens

        await self.prepare()
        last = self.session.last_usage
        return await compact(self.ctx, "manual", instructions,
                             context_tokens(last) if last else 0)

    def set_max_thinking_tokens(self, tokens: int | None) -> None:
        self.ctx.config.thinking = thinking_config(tokens if tokens and tokens > 0 else None)

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

    async def end_session(self) -> None:
        """SessionEnd hooks, once, if the session started."""
        if self._started and not self._ended:
            from wisp.engine.hook_points import session_end

            self._ended = True
            await session_end(self.ctx, "other")

    async def aclose(self) -> None:
        """Ends the session: a running turn is interrupted and let finish, then SessionEnd
        hooks, MCP servers closed politely (stdin EOF), and every process this session's
        tools left running. Other runtimes in the process are untouched."""
        if self._closed:
            return
        self._closed = True
        task = self._current
        if task is not None and not task.done() and task is not asyncio.current_task():
            self.interrupt()
            await asyncio.wait({task})
        await self.end_session()
        if self._mcp is not None:
            await self._mcp.close()
        self.session.processes.kill_all()
        close = getattr(self.session.recorder, "close", None)
        if callable(close):
            close()
