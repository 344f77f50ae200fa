"""Runs the queued prompts of a duplex session, one turn at a time.

Above: the duplex server, which queues prompts and may interrupt. Below: the agent loop,
one `AgentLoop.run` per prompt. Every prompt ends with exactly one `result` frame, even
when the loop itself fails; `idle` is reported only after that result and only when no
prompt is waiting (sdk-contract §7). A configuration error found mid-run (an unknown
`--permission-prompt-tool`) ends the session with exit 1, as the reference does.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from wisp.errors import UsageError
from wisp.wire import frames

if TYPE_CHECKING:
    from wisp.duplex.prompts import PromptQueue
    from wisp.duplex.server import DuplexServer

JSON = dict[str, Any]


class TurnRunner:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server
        self.current: asyncio.Task[JSON] | None = None
        self.busy = False  # a prompt has left the queue and has no result yet
        self.last_error = False
        self.fatal = False
        self._started = False
        self._doomed = False  # interrupted after leaving the queue, before its loop started

    def exit_code(self) -> int:
        return 1 if self.fatal or self.last_error else 0

    async def work(self, prompts: PromptQueue) -> None:
        from wisp.engine.hook_points import session_end

        server = self.server
        while (frame := await prompts.get()) is not None:
            self.busy = True
            await server.ready.wait()
            result = await self._run(frame["message"]["content"])
            self.busy = False
            if result is None:
                return  # fatal: the server exits 1
            server.sink.write(result)
            self.last_error = bool(result.get("is_error"))
            if not prompts:
                server.state.set("idle")
        if self._started:
            await session_end(server.ctx, "other")

    async def _run(self, content: str | list[JSON]) -> JSON | None:
        from wisp.engine.loop import AgentLoop

        server = self.server
        started = time.monotonic()
        await self._start_session()
        await server.connect_mcp()
        server.state.set("running")
        self._emit_init()
        task = self.current = asyncio.ensure_future(
            AgentLoop(server.ctx, server.tool_state).run(content)
        )
        if self._doomed:
            self._doomed = False
            task.cancel()  # never starts: it ends with an interrupted result
        try:
            return await task
        except UsageError as exc:
            sys.stderr.write(f"Error: {exc}\n")
            server.sink.write(self._error_result(str(exc), started))
            self.fatal = True
            return None
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # this worker itself is being cancelled
            return self._error_result("The turn was interrupted before it could end.", started)
        except Exception as exc:  # a bug must not hang the session: it becomes this result
            traceback.print_exc(file=sys.stderr)
            return self._error_result(f"Internal error: {exc!r}", started)
        finally:
            self.current = None

    async def _start_session(self) -> None:
        """SessionStart hooks fire before the first turn, after initialize registered the
        SDK's callbacks."""
        if self._started:
            return
        from wisp.engine.hook_points import session_start

        self._started = True
        opts = self.server.opts
        resumed = opts.resume is not None or opts.continue_session
        await session_start(self.server.ctx, "resume" if resumed else "startup")

    def interrupt(self) -> None:
        task = self.current
        if task is None or task.done():
            # Still getting ready (initialize, MCP handshake): that turn must not run.
            self._doomed = self.busy
            return
        session = self.server.session
        session.abort.set()
        session.processes.kill_all()
        if asyncio.current_task() is not task:
            task.cancel()
        # From inside the turn (a host's deny with `interrupt`) the task can't cancel
        # itself cleanly; the loop sees `abort` at its next tool boundary instead.

    def _emit_init(self) -> None:
        server = self.server
        session, config = server.session, server.ctx.config
        extra = [str(d.get("name")) for d in config.extra_tool_definitions]
        server.sink.write(
            frames.init(
                session_id=session.session_id,
                cwd=str(session.cwd),
                tools=[*config.tools, *extra],
                model=session.model,
                permission_mode=server.tool_state.policy.mode,
                api_key_source=config.api_key_source,
                mcp_servers=server.mcp.init_entries(),
                agents=list(server.agents),
            )
        )

    def _error_result(self, message: str, started: float) -> JSON:
        """A result for a turn the loop could not finish, built like every other result."""
        from wisp.engine.outcome import Failed, RunState, result_frame

        return result_frame(self.server.ctx, RunState(started=started), Failed(message))
