"""The duplex session: stdin frames in, prompts run one at a time, frames out.

Above: the SDK (or any client) writing NDJSON to stdin. Below: one `Runtime`, whose events
the stream-json projection renders to stdout. This module speaks the control protocol
and nothing else: building and running the engine is the runtime's. Prompts
queue and run in order, each ending with one `result`. A control request can arrive at any
moment; the dispatcher runs its handler concurrently. At EOF the queue is drained and the
process exits 0, or 1 if the last result was an error. A malformed line is answered with
an error frame and the session goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.control.dispatcher import Dispatcher, Requester
from wisp.control.stdin import FrameReader, Line, StdinReader
from wisp.diagnostics import warn
from wisp.duplex.early import EarlyStart
from wisp.duplex.host import HostBridge
from wisp.duplex.prompts import PROMPT_UUID, PromptQueue
from wisp.duplex.state import StateReporter, reads_session_state
from wisp.duplex.turns import TurnRunner
from wisp.engine.session import Session
from wisp.engine.tool_calls import ToolRunState
from wisp.jsontypes import JSON
from wisp.launch.options import Options
from wisp.launch.setup import runtime_config
from wisp.mcp.hub import McpHub
from wisp.runtime.facts import bypass_refusal, load_settings
from wisp.runtime.runtime import Runtime
from wisp.stamps import new_uuid
from wisp.tools.base import Tool
from wisp.wire import frames
from wisp.wire.projection import StreamJson
from wisp.wire.writer import FrameSink, NDJSONWriter, line_limit

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext
    from wisp.settings.loader import Settings

DEFAULT_KEEPALIVE_S = 30.0


def keepalive_interval(env: Mapping[str, str]) -> float:
    """`WISP_KEEPALIVE_INTERVAL_S`: how long a busy session may stay silent on stdout."""
    try:
        value = float(env.get("WISP_KEEPALIVE_INTERVAL_S", DEFAULT_KEEPALIVE_S))
    except ValueError:
        return DEFAULT_KEEPALIVE_S
    return value if value > 0 else DEFAULT_KEEPALIVE_S


class DuplexServer:
    def __init__(
        self, opts: Options, env: dict[str, str], settings: Settings | None = None, *,
        sink: FrameSink | None = None, host: Requester | None = None,
        project: ProjectContext | None = None,
    ) -> None:
        self.opts = opts
        self.sink: FrameSink = sink if sink is not None else NDJSONWriter(
            limit=line_limit(env))
        settings = settings if settings is not None else load_settings(opts.runtime, env)
        self.frames = StreamJson(self.sink, session_id="")
        self.frames.forward_subagent_text = opts.runtime.forward_subagent_text
        self.frames.internal_frames = env.get("WISP_PROGRESS_FRAMES") == "1"
        self.runtime = Runtime.open(runtime_config(opts, env, settings=settings,
                                                   project=project),
                                    self.frames, mcp_send=self.mcp_send)
        self.frames.session_id = self.session.session_id
        self.env = self.runtime.env  # the session's overlay: what handlers resolve against
        self.dispatcher = Dispatcher(self.sink)
        self._host: Requester = host if host is not None else self.dispatcher
        self.state = StateReporter(
            self.sink,
            lambda: self.session.session_id,
            reads_session_state(self.env),
        )
        self.host = HostBridge(self._host, self.state, self.runtime, self.interrupt,
                               may_bypass=bypass_refusal(opts.runtime.bypass_allowed,
                                                         self.runtime.base_env) is None)
        self.runtime.connect_host(
            self.host.can_use_tool if opts.runtime.permission_prompt_tool == "stdio" else None,
            self.host.hook_callback)
        self.runtime.mcp_elicit = self.host.elicit  # an MCP server asking the user
        self.prompts = PromptQueue()
        self.ready = asyncio.Event()  # set once no initialize is being processed
        self.ready.set()
        self._mcp_starts: set[asyncio.Task[None]] = set()  # held: the loop's refs are weak
        self.turns = TurnRunner(self)
        self.agents: dict[str, JSON] = {}
        self.title: str | None = None
        self.flag_settings: JSON = {}
        self.settings_sources: list[JSON] = settings.describe()
        self.settings_errors: list[JSON] = settings.errors
        self._applying: asyncio.Future[None] | None = None
        self._reader: FrameReader | None = None
        self.initialized = False  # an initialize was applied: a later one re-attaches

    # The runtime's parts, as the control handlers reach them.

    @property
    def session(self) -> Session:
        return self.runtime.session

    @property
    def tool_state(self) -> ToolRunState:
        return self.runtime.tool_state

    @property
    def mcp(self) -> McpHub:
        return self.runtime.mcp

    @property
    def base_tools(self) -> dict[str, Tool]:
        return self.runtime.base_tools

    # Reading ---------------------------------------------------------------------------

    async def serve(self, early: EarlyStart | None = None,
                    reader: FrameReader | None = None) -> int:
        from wisp.duplex.handlers import register_handlers

        early = early or EarlyStart()
        register_handlers(self)
        if self.opts.session_mirror:
            self._mirror_transcripts()
        self.start_mcp()
        if early.initialize is not None:
            self._apply_answered(early.initialize)
        if reader is None:
            reader = StdinReader(
                asyncio.get_running_loop(),
                initial=early.pending,
                first_line=early.first_line,
                eof=early.eof,
            )
        self._reader = reader
        reader.start()
        worker = asyncio.ensure_future(self.turns.work(self.prompts))
        keepalive = asyncio.ensure_future(self._keepalive())
        warming = asyncio.ensure_future(self._warm_up())
        reading = asyncio.ensure_future(self._read(reader))
        await asyncio.wait({reading, worker}, return_when=asyncio.FIRST_COMPLETED)
        if reading.done():
            # EOF: nobody can answer a request any more; finish the queued work.
            self.dispatcher.close()
            self.prompts.close()
            await worker
            await self.dispatcher.drain()
        else:
            reading.cancel()  # the worker stopped on a fatal error
        keepalive.cancel()
        warming.cancel()
        return self.turns.exit_code()

    async def _warm_up(self) -> None:
        """While the host has not sent a prompt yet (SDK clients connect first and prompt
        later), pay the first turn's one-off costs (`Runtime.warm_up`): once initialize is
        applied, so the request built is the one the turn will send, and only if no prompt
        has come meanwhile, which would pay them itself."""
        await self.ready.wait()
        await asyncio.sleep(0)  # stdin lines already read are routed first
        if not self.prompts and not self.turns.busy:
            self.runtime.warm_up()

    def _mirror_transcripts(self) -> None:
        """`--session-mirror` (the SDKs' `session_store`): every transcript line this
        session writes, subagents' included, also goes out as a `transcript_mirror` frame,
        which the SDK appends to the host's store. Set in this task's context, which the
        session's tasks inherit."""
        from wisp.sessions.transcript import mirror_to

        def send(path: str, entries: list[JSON]) -> None:
            self.sink.write({"type": "transcript_mirror", "filePath": path,
                             "entries": entries})

        mirror_to.set(send)

    def _apply_answered(self, request: JSON) -> None:
        """Applies an initialize answered early, as its handler would have: concurrently
        with later frames (an MCP handshake needs their answers), prompts waiting."""
        from wisp.duplex.initialize import apply_initialize

        async def apply() -> None:
            try:
                await apply_initialize(self, request)
            except Exception as exc:  # the answer is out; say what could not be applied
                warn(f"wisp: warning: initialize could not be applied: {exc}\n")
            finally:
                self.ready.set()

        self.ready.clear()
        self.initialized = True
        self._applying = asyncio.ensure_future(apply())

    async def _read(self, reader: FrameReader) -> None:
        while (line := await reader.queue.get()) is not None:
            self.receive(line)

    def end_input(self) -> None:
        """`end_session`: read no further, as at stdin EOF (queued prompts still run)."""
        if self._reader is not None:
            self._reader.queue.put_nowait(None)

    def receive(self, line: Line) -> None:
        """Handles one input line now (the reader's loop, or an in-process host that has
        nothing queued ahead of it)."""
        try:
            self._route(line)
        except Exception as exc:
            # Leaving the read loop reads as EOF and ends the session: one frame that trips
            # a bug is answered like a malformed one instead.
            self._input_error(line.number, f"could not handle stdin line {line.number}: {exc!r}")

    def _route(self, line: Line) -> None:
        if line.frame is None:
            self._input_error(
                line.number,
                f"could not parse stdin line {line.number} ({line.raw_length} bytes): {line.error}",
            )
            return
        frame = line.frame
        kind = frame.get("type")
        if kind == "user":
            self._enqueue(line.number, frame)
        elif kind in ("control_request", "control_response", "control_cancel_request"):
            request = frame.get("request")
            if isinstance(request, dict) and request.get("subtype") == "initialize":
                self.ready.clear()  # prompts wait until initialize's config is applied
            self.dispatcher.receive(frame)
        elif kind == "update_environment_variables":
            from wisp.duplex.env_updates import apply_env_update

            apply_env_update(self, frame)
        # Anything else (keep_alive, future frame types) is ignored, as the reference does.

    def _enqueue(self, number: int, frame: JSON) -> None:
        message = frame.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, (str, list)):
            self._input_error(
                number,
                f"user frame on line {number} has no message.content "
                "(expected a string or a list of content blocks)",
            )
            return
        # The prompt's message id: the client's own, else a new one. The replay carries
        # it, and so do the transcript line and the file checkpoint (`rewind_files`).
        stamped = frame.get("uuid")
        prompt_uuid = stamped if isinstance(stamped, str) and stamped else new_uuid()
        if self.opts.replay_user_messages:
            self.sink.write(frames.user(content, session_id=self.session.session_id,
                                        uuid_=prompt_uuid, isReplay=True))
        self.state.set("running")
        self.prompts.put({**frame, PROMPT_UUID: prompt_uuid})

    def _input_error(self, number: int, message: str) -> None:
        self.sink.write(
            frames.system("input_error", self.session.session_id, error=message, line=number)
        )

    # Session controls --------------------------------------------------------------------

    def interrupt(self, cancel_queued: bool = False) -> JSON:
        """Ends the running turn (if any) and answers with the interrupt receipt: the
        uuids of queued prompts that will still run, or, with `cancel_queued`, those
        dropped."""
        if cancel_queued:
            receipt: JSON = {"still_queued": [], "cancelled": self.prompts.cancel_all()}
        else:
            receipt = {"still_queued": self.prompts.uuids()}
        self.runtime.interrupt(cancel_queued)
        if not self.turns.busy and not self.prompts and not self.runtime.tasks.agents_busy():
            self.state.set("idle")
        return receipt

    def commands(self) -> list[JSON]:
        """The slash commands a prompt may name now (initialize's `commands`)."""
        from wisp.duplex.init_answer import commands

        return commands(self.runtime.cwd, self.env, self.runtime.project)

    def commands_changed(self, before: list[JSON]) -> None:
        """After a reload: `system/commands_changed` with the whole new list when it is not
        `before`, as the reference sends it (ahead of the reload's answer)."""
        now = self.commands()
        if now != before:
            self.sink.write(frames.system("commands_changed", self.session.session_id,
                                          commands=now))

    def start_mcp(self) -> None:
        """Starts the servers wisp runs itself in the background: the first turn (or
        `mcp_status`) waits for them, nothing before it does."""
        if self.mcp.has_pending(local_only=True):
            task = asyncio.ensure_future(self.connect_mcp(local_only=True))
            self._mcp_starts.add(task)
            task.add_done_callback(self._mcp_starts.discard)

    async def connect_mcp(self, local_only: bool = False) -> None:
        await self.runtime.connect_mcp(local_only)

    def refresh_tools(self) -> None:
        self.runtime.tools_changed()

    async def mcp_send(self, server: str, message: JSON) -> JSON:
        return await self._host.request(
            {"subtype": "mcp_message", "server_name": server, "message": message}
        )

    async def _keepalive(self) -> None:
        interval = keepalive_interval(self.env)
        while True:
            await asyncio.sleep(interval)
            if self.turns.busy or self.state.state != "idle":
                self.sink.write({"type": "keep_alive"})
