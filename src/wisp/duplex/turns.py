"""Runs the queued prompts of a duplex session, one turn at a time.

Above: the duplex server, which queues prompts and may interrupt. Below: the session's
`Runtime`, one `run_prompt` per prompt, which ends every prompt with exactly one result,
even when the loop itself fails. Here: what the protocol adds around a turn, `system/init`
before it and `idle` only after its result and only when no prompt is waiting
(docs/protocol.md, "Session state"). A configuration error found mid-run (an unknown
`--permission-prompt-tool`) ends the session with exit 1, as the reference does.

Background tasks: one that finishes while no prompt runs wakes a turn of its own (its
notice is the prompt); a session with a background subagent still running is not idle;
and at stdin EOF the session waits for its background work, turns included, before it
ends (docs/protocol.md, "Tasks").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from wisp.diagnostics import warn
from wisp.duplex.prompts import PROMPT_UUID
from wisp.duplex.state import cancel_ends_on_result
from wisp.engine.outcome import Aborted
from wisp.errors import UsageError
from wisp.jsontypes import JSON
from wisp.wire import frames

if TYPE_CHECKING:
    from wisp.duplex.prompts import PromptQueue
    from wisp.duplex.server import DuplexServer
    from wisp.engine.outcome import Outcome
    from wisp.runtime.runtime import Runtime

NOTICES: JSON = {}  # `_next`'s answer when a background task's notice wants a turn


class TurnRunner:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server
        self.busy = False  # a prompt has left the queue and has no result yet
        self.last_error = False
        self.fatal = False
        self._memory_reported = False  # `memory_recall` goes out once, after the first init
        self._cancel_ends_on_result = cancel_ends_on_result(server.env)

    def exit_code(self) -> int:
        return 1 if self.fatal or self.last_error else 0

    async def work(self, prompts: PromptQueue) -> None:
        server = self.server
        while (frame := await self._next(prompts)) is not None:
            self.busy = True
            server.runtime.claim()
            await server.ready.wait()
            if frame is NOTICES:
                outcome = await self._run_notices()
            else:
                server.frames.turn_stamps = prompt_stamps(frame)
                try:
                    outcome = await self._run(frame["message"]["content"],
                                              frame.get(PROMPT_UUID))
                finally:
                    server.frames.turn_stamps = {}
            self.busy = False
            if outcome is None:
                return  # fatal: the server exits 1
            self.last_error = not _succeeded(outcome)
            if not (isinstance(outcome, Aborted) and self._cancel_ends_on_result):
                self._idle_unless_owed(prompts)
        await server.runtime.end_session()

    async def _next(self, prompts: PromptQueue) -> JSON | None:
        """The next prompt; `NOTICES` when a background task's end wants a turn and no
        prompt is queued; None at EOF once no background work is left."""
        tasks = self.server.runtime.tasks
        while True:
            if prompts:
                return await prompts.get()
            if tasks.has_wake():
                return NOTICES
            if prompts.closed:
                if not tasks.busy():
                    return None
                await tasks.changed()
                continue
            getter = asyncio.ensure_future(prompts.get())
            changed = asyncio.ensure_future(tasks.changed())
            try:
                await asyncio.wait({getter, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                if not getter.done():
                    getter.cancel()  # nothing was taken: a waiting get() takes nothing
            if getter.done() and not getter.cancelled() and (frame := getter.result()):
                return frame
            self._idle_unless_owed(prompts)  # e.g. the last background subagent was stopped

    def _idle_unless_owed(self, prompts: PromptQueue) -> None:
        """`idle` only with no prompt queued and no turn owed: a background subagent's
        end will want one (the SDKs keep stdin open until `idle`)."""
        tasks = self.server.runtime.tasks
        if not prompts and not self.busy and not tasks.agents_busy() and not tasks.has_wake():
            self.server.state.set("idle")

    async def _run_notices(self) -> Outcome | None:
        runtime = self.server.runtime
        await runtime.prepare()
        self.server.state.set("running")
        try:
            outcome = await runtime.run_notifications(announce=self._emit_init)
        except UsageError as exc:
            warn(f"Error: {exc}\n")
            self.fatal = True
            return None
        if outcome is None:  # the notices were delivered in a turn meanwhile
            from wisp.engine.outcome import Success

            return Success("")
        return outcome

    async def _run(self, content: str | list[JSON], uuid: str | None) -> Outcome | None:
        runtime = self.server.runtime
        await runtime.prepare()
        self.server.state.set("running")
        try:
            # `system/init` once the turn's session is known (after /clear, the new one).
            return await runtime.run_prompt(content, uuid=uuid, announce=self._emit_init)
        except UsageError as exc:
            # The runtime has written this turn's result; the session cannot go on.
            warn(f"Error: {exc}\n")
            self.fatal = True
            return None

    def _emit_init(self) -> None:
        server = self.server
        session, runtime = server.session, server.runtime
        server.sink.write(
            frames.init(
                session_id=session.session_id,
                cwd=str(session.cwd),
                tools=runtime.offered_tool_names,
                model=session.model,
                permission_mode=session.permission_mode,
                api_key_source=runtime.api_key_source,
                mcp_servers=server.mcp.init_entries(),
                slash_commands=slash_commands(server.runtime),
                sandbox=server.runtime.sandbox_status(),
                **server.runtime.project.init_fields(server.agents),
            )
        )
        memory = server.runtime.project.memory_frame_fields()
        if memory is not None and not self._memory_reported:
            self._memory_reported = True
            server.sink.write(frames.system("memory_recall", session.session_id, **memory))


def slash_commands(runtime: Runtime) -> list[str]:
    from wisp.commands.prompts import names
    from wisp.paths import config_dir

    return names(runtime.cwd, config_dir(runtime.env), runtime.project)


def prompt_stamps(frame: JSON) -> JSON:
    """What the turn's result repeats of the prompt that started it (docs/protocol.md,
    "Results"): the SDK host's `origin`, of which only `{"kind": "human"}` is honoured from
    a host, and the client's `uuid` of the message."""
    stamps: JSON = {}
    origin = frame.get("origin")
    if isinstance(origin, dict) and origin.get("kind") == "human":
        stamps["origin"] = {"kind": "human"}
    uuid = frame.get("uuid")
    if isinstance(uuid, str) and uuid:
        stamps["user_message_uuid"] = uuid
        stamps["user_message_uuids"] = [uuid]
    return stamps


def _succeeded(outcome: Outcome) -> bool:
    from wisp.engine.outcome import Success

    return isinstance(outcome, Success)
