"""The duplex session: stdin frames in, prompts run one at a time, frames out.

Above: the SDK (or any client) writing NDJSON to stdin. Below: the agent loop. Prompts
queue and run in order, each ending with one `result`. A control request can arrive at any
moment; the dispatcher runs its handler concurrently. At EOF the queue is drained and the
process exits 0, or 1 if the last result was an error. A malformed line is answered with
an error frame and the session goes on.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from wisp.cli.options import Options
from wisp.cli.setup import build_run, load_settings_for, new_session
from wisp.control.dispatcher import Dispatcher
from wisp.control.stdin import Line, StdinReader
from wisp.duplex.host import HostBridge
from wisp.duplex.state import StateReporter
from wisp.engine.loop import AgentLoop
from wisp.hooks.runner import HookRunner
from wisp.mcp.sdk_bridge import SdkMcpServer
from wisp.wire import frames
from wisp.wire.writer import NDJSONWriter

JSON = dict[str, Any]
KEEPALIVE_S = float(os.environ.get("WISP_KEEPALIVE_INTERVAL_S", "30"))


class DuplexServer:
    def __init__(self, opts: Options, env: dict[str, str]) -> None:
        self.opts = opts
        self.env = env
        self.sink = NDJSONWriter()
        self.settings = load_settings_for(opts, env)
        self.session = new_session(opts, env, self.settings)
        self.ctx, self.tool_state = build_run(opts, self.session, self.sink, env, self.settings)
        self.base_tools = dict(self.ctx.config.tools)
        self.dispatcher = Dispatcher(self.sink)
        self.state = StateReporter(self.sink, lambda: self.session.session_id,
                                   env.get("CLAUDE_CODE_SDK_READS_SESSION_STATE") == "1")
        self.host = HostBridge(self.dispatcher, self.state, self.tool_state.policy,
                               self.interrupt)
        if opts.permission_prompt_tool == "stdio":
            self.tool_state.ask_host = self.host.can_use_tool
        assert self.ctx.hooks is not None  # build_run installs the settings hooks
        self.ctx.hooks.callback = self.host.hook_callback
        self.prompts: asyncio.Queue[JSON | None] = asyncio.Queue()
        self.ready = asyncio.Event()  # set once no initialize is being processed
        self.ready.set()
        self.current: asyncio.Task[JSON] | None = None
        self.queued = 0  # prompts received and not yet started
        self.last_error = False
        self.mcp_servers: dict[str, SdkMcpServer] = {}
        self.mcp_connected = False
        self.agents: dict[str, JSON] = {}
        self.title: str | None = None
        self.flag_settings: JSON = {}
        self.settings_sources: list[JSON] = self.settings.describe()
        self.settings_errors: list[JSON] = self.settings.errors
        self._load_mcp_config()

    def _load_mcp_config(self) -> None:
        from wisp.duplex.mcp_config import parse_mcp_configs

        for name, entry in parse_mcp_configs(self.opts.mcp_config).items():
            server = SdkMcpServer(name, self.mcp_send)
            if entry.get("type") != "sdk":
                server.status = "failed"
                server.error = "only SDK-hosted MCP servers are supported so far"
            self.mcp_servers[name] = server

    # Reading ---------------------------------------------------------------------------

    async def serve(self) -> int:
        from wisp.duplex.handlers import register_handlers

        register_handlers(self)
        reader = StdinReader(asyncio.get_running_loop())
        reader.start()
        worker = asyncio.ensure_future(self._worker())
        keepalive = asyncio.ensure_future(self._keepalive())
        while (line := await reader.queue.get()) is not None:
            self._route(line)
        self.dispatcher.close()
        await self.prompts.put(None)
        await worker
        keepalive.cancel()
        return 1 if self.last_error else 0

    def _route(self, line: Line) -> None:
        if line.frame is None:
            self._input_error(line.number, f"could not parse stdin line {line.number} "
                              f"({line.raw_length} bytes): {line.error}")
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
        # Anything else (keep_alive, future frame types) is ignored, as the reference does.

    def _enqueue(self, number: int, frame: JSON) -> None:
        message = frame.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, (str, list)):
            self._input_error(number, f"user frame on line {number} has no message.content "
                              "(expected a string or a list of content blocks)")
            return
        if self.opts.replay_user_messages:
            self.sink.write(frames.user(content, session_id=self.session.session_id,
                                        isReplay=True))
        self.state.set("running")
        self.queued += 1
        self.prompts.put_nowait(frame)

    def _input_error(self, number: int, message: str) -> None:
        self.sink.write(frames.system("input_error", self.session.session_id, error=message,
                                      line=number))

    # Running ---------------------------------------------------------------------------

    async def _worker(self) -> None:
        while (frame := await self.prompts.get()) is not None:
            self.queued -= 1
            await self.ready.wait()
            await self.ensure_mcp()
            message = frame["message"]
            self.state.set("running")
            self._emit_init()
            loop = AgentLoop(self.ctx, self.tool_state)
            self.current = asyncio.ensure_future(loop.run(message["content"]))
            result = await self.current
            self.current = None
            self.sink.write(result)
            self.last_error = bool(result.get("is_error"))
            if self.queued == 0:
                self.state.set("idle")

    def _emit_init(self) -> None:
        session, config = self.session, self.ctx.config
        self.sink.write(frames.init(
            session_id=session.session_id, cwd=str(session.cwd), tools=list(config.tools),
            model=session.model, permission_mode=self.tool_state.policy.mode,
            api_key_source=config.api_key_source,
            mcp_servers=[{"name": s.name, "status": s.status} for s in self.mcp_servers.values()],
            agents=list(self.agents)))

    def interrupt(self) -> None:
        if self.current is not None and not self.current.done():
            self.session.abort.set()
            self.session.processes.kill_all()
            self.current.cancel()

    async def ensure_mcp(self) -> None:
        if self.mcp_connected:
            return
        self.mcp_connected = True
        for server in self.mcp_servers.values():
            if server.status == "pending":
                await server.connect()
        self.refresh_tools()

    def refresh_tools(self) -> None:
        tools = dict(self.base_tools)
        for server in self.mcp_servers.values():
            tools.update({t.name: t for t in server.as_tools()})
        self.ctx.config.tools = tools

    async def mcp_send(self, server: str, message: JSON) -> JSON:
        return await self.dispatcher.request(
            {"subtype": "mcp_message", "server_name": server, "message": message})

    def _emit_hook_event(self, subtype: str, fields: JSON) -> None:
        self.sink.write(frames.system(subtype, self.session.session_id, **fields))

    async def _keepalive(self) -> None:
        while True:
            await asyncio.sleep(KEEPALIVE_S)
            if self.current is not None or self.state.state != "idle":
                self.sink.write({"type": "keep_alive"})
