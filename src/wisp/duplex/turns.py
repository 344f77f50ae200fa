"""Runs the queued prompts of a duplex session, one turn at a time.

Above: the duplex server, which queues prompts and may interrupt. Below: the session's
`Runtime`, one `run_prompt` per prompt, which ends every prompt with exactly one result,
even when the loop itself fails. Here: what the protocol adds around a turn, `system/init`
before it and `idle` only after its result and only when no prompt is waiting
(docs/protocol.md, "Session state"). A configuration error found mid-run (an unknown
`--permission-prompt-tool`) ends the session with exit 1, as the reference does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wisp.diagnostics import warn
from wisp.errors import UsageError
from wisp.wire import frames

if TYPE_CHECKING:
    from wisp.duplex.prompts import PromptQueue
    from wisp.duplex.server import DuplexServer
    from wisp.engine.outcome import Outcome

JSON = dict[str, Any]


class TurnRunner:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server
        self.busy = False  # a prompt has left the queue and has no result yet
        self.last_error = False
        self.fatal = False

    def exit_code(self) -> int:
        return 1 if self.fatal or self.last_error else 0

    async def work(self, prompts: PromptQueue) -> None:
        server = self.server
        while (frame := await prompts.get()) is not None:
            self.busy = True
            server.runtime.claim()
            await server.ready.wait()
            outcome = await self._run(frame["message"]["content"])
            self.busy = False
            if outcome is None:
                return  # fatal: the server exits 1
            self.last_error = not _succeeded(outcome)
            if not prompts:
                server.state.set("idle")
        await server.runtime.end_session()

    async def _run(self, content: str | list[JSON]) -> Outcome | None:
        runtime = self.server.runtime
        await runtime.prepare()
        self.server.state.set("running")
        self._emit_init()
        try:
            return await runtime.run_prompt(content)
        except UsageError as exc:
            # The runtime has written this turn's result; the session cannot go on.
            warn(f"Error: {exc}\n")
            self.fatal = True
            return None

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
                permission_mode=session.permission_mode,
                api_key_source=config.api_key_source,
                mcp_servers=server.mcp.init_entries(),
                agents=list(server.agents),
            )
        )


def _succeeded(outcome: Outcome) -> bool:
    from wisp.engine.outcome import Success

    return isinstance(outcome, Success)
