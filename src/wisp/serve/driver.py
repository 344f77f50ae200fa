"""`SessionDriver`: runs one session's turns through a `Runtime`, in the process that holds
the session's lease.

Client events arrive in log order (`handle`). A `user.message` starts a turn (or waits for
the running one to end); `user.interrupt` stops it; `user.custom_tool_result`,
`user.tool_result` and `user.tool_confirmation` answer a call the turn is waiting on.
Each is logged a second time, same id, with `processed_at`, when it is taken up.

Status: `session.status_running` when a turn starts or resumes, `session.status_idle`
with `requires_action` (the events waited on) while a client must answer, and with
`end_turn` when the turn is over.

Recovery (`resume`): the model conversation is in the store, written with the events in
one transaction (`wisp.serve.projection`). A session found mid-turn after a crash
continues from it: a user message without its answer is sent to the model again; a tool
call without a result gets the result a client already posted, is run again when it
changes nothing (read, glob, grep), is recorded as interrupted otherwise, or, for a
client's call, is waited on again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from wisp.jsontypes import JSON
from wisp.serve import budget, ending, file_sources, shapes, turn_setup
from wisp.serve.outcomes import Outcomes
from wisp.serve.projection import SessionProjection
from wisp.serve.recovery import result_of
from wisp.serve.session_log import Fanout, SessionLog, tool_event_id
from wisp.serve.session_mcp import SessionMcp
from wisp.serve.store.base import LeaseLost
from wisp.serve.tool_plan import ToolPlan
from wisp.serve.toolset import ClientTool, ConfirmedTool, WrittenFirst, cloud_tools
from wisp.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.models.base import Model
    from wisp.runtime.runtime import Runtime
    from wisp.serve.containment import Housing
    from wisp.serve.shapes import ClientEventRecord, Reply, TurnStarter
    from wisp.serve.store.base import Store


class SessionDriver:
    def __init__(self, store: Store, fanout: Fanout, session: JSON, agent: shapes.SessionAgent,
                 environment: JSON | None, *, env: Mapping[str, str], workspace: Path,
                 housing: Housing | None = None, model: Model | None = None,
                 holder: str | None = None, billed_to: str | None = None) -> None:
        self.store = store
        self.session_id = str(session["id"])
        self.billed_to = billed_to or self.session_id  # a thread's: its session
        self.log = SessionLog(store, fanout, self.session_id, holder=holder, deferred=True)
        self.plan = ToolPlan(agent, environment)
        self.agent = agent
        self.environment = environment
        self.env = dict(env)
        self.workspace = workspace
        self.housing = housing  # None: no sandbox (a driver built without the service)
        self.model = model
        self.runtime: Runtime | None = None
        self.projection: SessionProjection | None = None
        self.turn: asyncio.Task[None] | None = None
        self.queue: list[TurnStarter] = []  # user messages waiting for the running turn
        self.waiting: dict[str, asyncio.Future[Reply]] = {}  # event id → answer
        self.answers: dict[str, Reply] = {}  # answers that came before anyone waited
        self._report_due = False
        self.stop_reason = "end_turn"  # how the turn in progress will end
        self.stop_details: JSON | None = None  # what a `refusal` says
        self.outcomes = Outcomes(self)
        self.status = str(session.get("status") or "idle")
        self.seen: set[str] = set()  # client events already taken in hand
        self.changed = asyncio.Event()  # set at each status change (see `settle`)
        self._opening = asyncio.Lock()  # held while the runtime is opened (`opened`)
        self.fenced = False  # the lease was lost: this driver writes no more
        self.mcp = SessionMcp(store, session, agent, environment, env=self.env, log=self.log,
                              plan=self.plan)

    # Building the runtime -----------------------------------------------------------------

    def host_tools(self, stored_tools: dict[str, Tool]) -> dict[str, Tool]:
        """The runtime's tools; `stored_tools` are those made from the store."""
        from wisp.serve.toolset import DESCRIPTIONS, SCHEMAS
        from wisp.tools.registry import builtin_tools

        here = [n for n in self.plan.toolset if self.plan.route(n)[0] == "cloud"]
        from wisp.serve.fence import fenced

        tools: dict[str, Tool] = fenced(cloud_tools(builtin_tools(), here, self.plan.web_fetch),
                                        self.workspace)
        for name in self.plan.toolset:
            if name not in here:
                tools[name] = ClientTool({"name": name, "description": DESCRIPTIONS[name],
                                          "input_schema": SCHEMAS[name]}, "toolset",
                                         self.client_call)
        for custom in self.plan.custom:
            tools[str(custom["name"])] = ClientTool(custom, "custom", self.client_call)
        tools.update(stored_tools)
        # A tool runs once the log has its call (written off the loop, in order).
        return {name: WrittenFirst(self.gated(name, tool), self.log.flush)
                for name, tool in tools.items()}

    def gated(self, name: str, tool: Tool) -> Tool:
        if self.plan.route(name)[1] != "ask":
            return tool
        return ConfirmedTool(tool, self._confirm)

    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done()

    # Client events ----------------------------------------------------------------------

    async def handle(self, events: list[ClientEventRecord]) -> None:
        """Client events as logged (`shapes.stored_client_events` made them typed)."""
        for event in events:
            if event["id"] in self.seen:
                continue  # still queued in the store: a user message waiting for its turn
            self.seen.add(event["id"])
            if event["type"] == "user.message" or event["type"] == "user.define_outcome":
                if self.busy:
                    self.queue.append(event)
                else:
                    self.start(event)
            elif event["type"] == "user.interrupt":
                self.log.consumed([event, *self.queue])  # queued messages are dropped too
                self.outcomes.dropped(self.queue)
                self.queue.clear()
                self._interrupt()
            elif event["type"] == "user.tool_confirmation":
                self._answer("confirm:" + event["tool_use_id"], event)
            elif event["type"] == "user.custom_tool_result":
                self._answer(event["custom_tool_use_id"], event)
            elif event["type"] == "user.tool_result":
                self._answer(event["tool_use_id"], event)
            else:
                self.log.consumed([event])  # nothing to do with it, but taken up

    def _answer(self, key: str, event: Reply) -> None:
        """`event` answers the call waiting under `key` (the call's event id, prefixed
        `confirm:` for a confirmation), now or when it comes to wait."""
        self.log.consumed([event])
        future = self.waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(event)
            if not self.waiting:
                self.set_status("running")
        else:
            self.answers[key] = event

    # Turns ------------------------------------------------------------------------------

    def start(self, prompt: TurnStarter | list[JSON] | str) -> None:
        """A turn for a `user.message` event (consumed when the model conversation takes
        it, in the same transaction) or for content recovered from the conversation."""
        self.set_status("running")
        self.turn = asyncio.ensure_future(self.run(prompt))

    async def run(self, prompt: TurnStarter | list[JSON] | str) -> None:
        """One turn; writes fenced off by a lost lease end it quietly (`_fenced`)."""
        try:
            await self._run(prompt)
        except LeaseLost:
            self._fenced()

    async def _run(self, prompt: TurnStarter | list[JSON] | str) -> None:
        await turn_setup.follow_agent_updates(self)
        await self.opened()
        await turn_setup.prepare(self)
        event = None if isinstance(prompt, (list, str)) else prompt
        content = prompt if event is None else self._content(event)
        if not await self.within_budget():
            if event is not None:
                self.log.consumed([event])  # taken up, and answered by budget_reached
            await self.outcomes.stop("the session's budget was reached")
            await self._end_turn()
            return
        if event is not None:
            assert self.projection is not None
            self.projection.consume_with_next_user = event
        if isinstance(content, list):
            content = await file_sources.inline_for_session(self.store, self.session_id,
                                                            content)
        ended = await self.once(cast("list[JSON] | str", content))
        await self.outcomes.pursue(ended)
        if self.projection is not None:
            self.projection.request_failed()  # a span left open by an error or interrupt
        await self._end_turn()

    def _content(self, event: TurnStarter) -> list[JSON]:
        """What the model is sent for a turn's event (an outcome's turn starts here)."""
        if event["type"] == "user.define_outcome":
            return self.outcomes.begin(event)
        return event["content"] or []

    async def once(self, content: list[JSON] | str) -> Outcome | None:
        """One run of the engine on `content`, its failure reported; None when it raised
        (reported too)."""
        runtime = await self.opened()
        try:
            outcome = await runtime.run_prompt(content)
        except LeaseLost:
            raise
        except Exception as exc:  # the session reports it; the service goes on
            self.log.emit(shapes.session_error("unknown_error", str(exc)))
            return None
        if ending.budget_hit(outcome):
            self.stop_reason = "budget_reached"
            budget.settle_unrun_calls(runtime)
        if self.log.fenced:  # the loop failed on a fenced write: it said nothing
            raise LeaseLost(self.session_id, self.log.holder or "")
        ending.report_failure(self, outcome)
        return outcome

    async def grade(self) -> None:
        """Grades a turn that ended before a crash (`wisp.serve.recovery`), then goes on
        as any turn working toward an outcome."""
        from wisp.engine.outcome import Success

        await self.opened()
        await self.outcomes.pursue(Success(""))
        await self._end_turn()

    async def within_budget(self) -> bool:
        """Gives the turn what the session's budget leaves (the engine stops before a
        model request past it); False, with `budget_reached` due, when nothing is left."""
        runtime = await self.opened()
        doc = await budget.billed(self)
        left = None if doc is None else budget.remaining(doc)
        runtime.spend_at_most(left)
        if left is None:
            return True
        if left <= 0:
            self.stop_reason = "budget_reached"
        return left > 0

    def document(self) -> JSON | None:
        owner = self.store.owner_of("session", self.session_id)
        return self.store.get("session", owner, self.session_id) if owner else None

    def _fenced(self) -> None:
        """Another worker took the session (this one was thought dead): stop, writing
        nothing more; that worker continues the turn from the log."""
        self.fenced = True
        for future in self.waiting.values():
            future.cancel()
        self.waiting.clear()

    async def _end_turn(self) -> None:
        """The turn's usage accounted and its end written (the log flushed: whoever
        waits for the turn, a step about to let the lease go, finds it all stored)."""
        for future in self.waiting.values():
            future.cancel()
        self.waiting.clear()
        await self.account_usage()
        if self.queue:
            self.turn = asyncio.ensure_future(self.run(self.queue.pop(0)))
            return
        reason, self.stop_reason = self.stop_reason, "end_turn"
        details, self.stop_details = self.stop_details, None
        self.set_status("idle", {"type": reason, "stop_details": details})
        await self.log.flush()

    async def account_usage(self) -> None:
        await budget.account(self, model_id(self.agent) or "")

    def _interrupt(self) -> None:
        if self.runtime is not None and self.busy:
            self.runtime.interrupt()
            self.outcomes.interrupt()
            for future in self.waiting.values():
                future.cancel()

    # Waiting on the client -----------------------------------------------------------------

    async def client_call(self, kind: str, name: str, tool_input: JSON,
                           tool_use_id: str) -> ToolResult:
        answer = await self._wait(tool_event_id(tool_use_id))
        result = result_of(shapes.log_entry(answer))
        if not isinstance(result.content, list):
            return result
        # The model reads the files' bytes; the log keeps the ids the client sent.
        return ToolResult(await file_sources.inline_for_session(
            self.store, self.session_id, result.content), result.is_error, result.data)

    async def _confirm(self, tool_use_id: str) -> JSON:
        return shapes.log_entry(await self._wait("confirm:" + tool_event_id(tool_use_id)))

    async def _wait(self, key: str) -> Reply:
        early = self.answers.pop(key, None)
        if early is not None:
            return early
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        if not self._report_due:  # one idle event for calls made together
            self._report_due = True
            asyncio.get_running_loop().call_soon(self._report_waiting)
        return await future

    def _report_waiting(self) -> None:
        self._report_due = False
        ids = list(dict.fromkeys(key.removeprefix("confirm:") for key in self.waiting))
        if ids:
            self.set_status("idle", {"type": "requires_action", "event_ids": ids})

    def set_status(self, status: str, stop_reason: JSON | None = None) -> None:
        if status == "running" and self.status == "running":
            return
        self.status = status
        self.changed.set()
        event = ending.status_event(status, stop_reason)
        # The event and the document's status at once. `rescheduling` lasts the moment a
        # restarted worker takes the session up: the document stays `running`, the status
        # the store looks for when it finds sessions that need a worker.
        self.log.emit(event, status="running" if status == "rescheduling" else status)

    async def settle(self) -> list[str] | None:
        """Waits until the turn is over (None) or stopped on the client: the event ids
        it waits on, once `requires_action` is reported. What a durable turn's step runs
        until (`wisp.serve.durable`)."""
        while True:
            if not self.busy:
                return None
            if self.waiting and not self._report_due and self.status == "idle":
                await self.log.flush()  # the step reports it: `requires_action` is stored
                return list(dict.fromkeys(k.removeprefix("confirm:") for k in self.waiting))
            self.changed.clear()
            assert self.turn is not None
            changed = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({self.turn, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()

    async def resume(self) -> None:
        """Continues a turn a crash cut short (`wisp.serve.recovery`)."""
        from wisp.serve.recovery import resume

        await resume(self)

    async def opened(self) -> Runtime:
        """The session's runtime, opened if it is not yet. Its store reads are made off
        the event loop (on PostgreSQL a long conversation, or a lock wait, would stall
        the process), after the log's queued writes: the conversation as the last turn
        left it. Once only when callers come together (recovered calls run at once)."""
        async with self._opening:
            if self.runtime is None:
                stored = await self.log.call(functools.partial(turn_setup.stored_parts, self))
                self.runtime = turn_setup.open_runtime(self, *stored)
            return self.runtime

    async def close(self) -> None:
        """Lets the session go (shutdown, a lost lease, a deleted session). The log stays
        as it is for whoever resumes the session: a turn stopped here records nothing
        (no "interrupted" results for calls still waiting on the client)."""
        self.log.silenced = True
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
        if self.runtime is not None:
            await self.runtime.aclose()
        await self.mcp.close()
        with contextlib.suppress(Exception):  # what was written before: in, or fenced off
            await self.log.flush()


def model_id(agent: shapes.SessionAgent) -> str | None:
    model = agent.get("model")
    if isinstance(model, dict):
        return str(model.get("id")) if model.get("id") else None
    return str(model) if model else None
