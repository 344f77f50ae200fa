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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from wisp.serve import shapes
from wisp.serve.projection import SessionProjection
from wisp.serve.session_log import Fanout, SessionLog, tool_event_id, tool_use_id_of
from wisp.serve.toolset import (
    IDEMPOTENT,
    TOOLSET_NAMES,
    TOOLSET_TYPE,
    ClientTool,
    cloud_tools,
)
from wisp.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.models.base import Model
    from wisp.runtime.runtime import Runtime
    from wisp.serve.store.base import Store

JSON = dict[str, Any]
ANSWERS = ("user.custom_tool_result", "user.tool_result")
INTERRUPTED_RESULT = ("This tool call was cut short when the service restarted; it may "
                      "have run in part. Check its effects before running it again.")


class ToolPlan:
    """Which tools the agent has, where each runs, and which ask first."""

    def __init__(self, agent: JSON, environment: JSON | None) -> None:
        config = (environment or {}).get("config") or {}
        self.self_hosted = config.get("type") == "self_hosted"
        self.toolset: dict[str, str] = {}  # name → "allow" | "ask"
        self.custom: list[JSON] = []
        for tool in agent.get("tools") or []:
            if tool.get("type") == TOOLSET_TYPE:
                self.toolset.update(_toolset_policies(tool))
            elif tool.get("type") == "custom":
                self.custom.append(tool)

    def route(self, name: str) -> tuple[str, str]:
        if name in self.toolset:
            return ("client" if self.self_hosted else "cloud"), self.toolset[name]
        return "custom", "allow"

    def allow_rules(self) -> tuple[str, ...]:
        """Cloud toolset tools the agent config enables run without a question here
        (`always_ask` ones after the client's confirmation). Rules name the tools as the
        model calls them; the working-folder boundary and protected paths still hold."""
        if self.self_hosted:
            return ()
        return tuple(self.toolset)


def _toolset_policies(tool: JSON) -> dict[str, str]:
    default = tool.get("default_config") or {}
    default_on = default.get("enabled", True) is not False
    default_policy = _policy_of(default)
    overrides = {c.get("name"): c for c in tool.get("configs") or [] if isinstance(c, dict)}
    policies: dict[str, str] = {}
    for name in TOOLSET_NAMES:
        config = overrides.get(name, {})
        if config.get("enabled", default_on) is False:
            continue
        policies[name] = _policy_of(config) if "permission_policy" in config else default_policy
    return policies


def _policy_of(config: JSON) -> str:
    policy = config.get("permission_policy") or {}
    return "ask" if policy.get("type") == "always_ask" else "allow"


class SessionDriver:
    def __init__(self, store: Store, fanout: Fanout, session: JSON, agent: JSON,
                 environment: JSON | None, *, env: Mapping[str, str], workspace: Path,
                 model: Model | None = None) -> None:
        self.store = store
        self.session_id = str(session["id"])
        self.log = SessionLog(store, fanout, self.session_id)
        self.plan = ToolPlan(agent, environment)
        self.agent = agent
        self.env = dict(env)
        self.workspace = workspace
        self.model = model
        self.runtime: Runtime | None = None
        self.projection: SessionProjection | None = None
        self.turn: asyncio.Task[None] | None = None
        self.queue: list[JSON] = []  # user messages waiting for the running turn
        self.waiting: dict[str, asyncio.Future[JSON]] = {}  # event id → answer
        self.answers: dict[str, JSON] = {}  # answers that came before anyone waited
        self._report_due = False
        self.status = str(session.get("status") or "idle")
        self.seen: set[str] = set()  # client events already taken in hand

    # Building the runtime -----------------------------------------------------------------

    def _open(self) -> Runtime:
        from wisp.runtime.config import RuntimeConfig
        from wisp.runtime.runtime import Runtime

        conversation = self.store.conversation(self.session_id)
        projection = SessionProjection(self.log, self.plan.route, len(conversation))
        config = RuntimeConfig(
            cwd=self.workspace, env=self.env, model=_model_id(self.agent),
            system_prompt=self.agent.get("system") or None, tools=(),
            allowed_tools=self.plan.allow_rules(), permission_mode="acceptEdits",
            permission_mode_set=True, no_session_persistence=True,
            include_partial_messages=True, setting_sources=("user",))
        runtime = Runtime.open(config, projection, model=self.model)
        runtime.session.history = conversation
        runtime.session.recorder = projection
        tools = self._tools()
        runtime.ctx.config.tools = dict(tools)
        runtime.base_tools = dict(tools)
        self.projection = projection
        return runtime

    def _tools(self) -> dict[str, Tool]:
        from wisp.tools.registry import builtin_tools

        names = list(self.plan.toolset)
        tools: dict[str, Tool] = {}
        if self.plan.self_hosted:
            from wisp.serve.toolset import DESCRIPTIONS, SCHEMAS

            for name in names:
                tools[name] = ClientTool({"name": name, "description": DESCRIPTIONS[name],
                                          "input_schema": SCHEMAS[name]}, "toolset",
                                         self._client_call)
        else:
            tools.update(cloud_tools(builtin_tools(), names))
        for custom in self.plan.custom:
            tools[str(custom["name"])] = ClientTool(custom, "custom", self._client_call)
        return {name: self._gated(name, tool) for name, tool in tools.items()}

    def _gated(self, name: str, tool: Tool) -> Tool:
        if self.plan.route(name)[1] != "ask":
            return tool
        return ConfirmedTool(tool, self._confirm)

    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done()

    # Client events ----------------------------------------------------------------------

    async def handle(self, events: list[JSON]) -> None:
        for event in events:
            if event["id"] in self.seen:
                continue  # still queued in the store: a user message waiting for its turn
            self.seen.add(event["id"])
            kind = event.get("type")
            if kind == "user.message":
                if self.busy:
                    self.queue.append(event)
                else:
                    self._start(event)
            elif kind == "user.interrupt":
                self.log.consumed([event, *self.queue])  # queued messages are dropped too
                self.queue.clear()
                self._interrupt()
            elif kind in ANSWERS or kind == "user.tool_confirmation":
                self._answer(event)
            else:
                self.log.consumed([event])  # nothing to do with it, but taken up

    def _answer(self, event: JSON) -> None:
        target = str(event.get("custom_tool_use_id") or event.get("tool_use_id") or "")
        key = ("confirm:" if event.get("type") == "user.tool_confirmation" else "") + target
        self.log.consumed([event])
        future = self.waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(event)
            if not self.waiting:
                self._set_status("running")
        else:
            self.answers[key] = event

    # Turns ------------------------------------------------------------------------------

    def _start(self, prompt: JSON | list[JSON] | str) -> None:
        """A turn for a `user.message` event (consumed when the model conversation takes
        it, in the same transaction) or for content recovered from the conversation."""
        self._set_status("running")
        self.turn = asyncio.ensure_future(self._run(prompt))

    async def _run(self, prompt: JSON | list[JSON] | str) -> None:
        if self.runtime is None:
            self.runtime = self._open()
        content = prompt
        if isinstance(prompt, dict):
            content = prompt.get("content") or []
            assert self.projection is not None
            self.projection.consume_with_next_user = prompt
        try:
            outcome = await self.runtime.run_prompt(cast("list[JSON] | str", content))
        except Exception as exc:  # the session reports it; the service goes on
            self.log.emit(shapes.session_error("unknown_error", str(exc)))
        else:
            error = _error_of(outcome)
            if error is not None:
                self.log.emit(shapes.session_error(*error))
        if self.projection is not None:
            self.projection.request_failed()  # a span left open by an error or interrupt
        self._end_turn()

    def _end_turn(self) -> None:
        for future in self.waiting.values():
            future.cancel()
        self.waiting.clear()
        self._account_usage()
        if self.queue:
            self.turn = asyncio.ensure_future(self._run(self.queue.pop(0)))
            return
        self._set_status("idle", {"type": "end_turn"})

    def _account_usage(self) -> None:
        """The turn's model usage added to the session's totals: the document's `usage`
        and a `session.usage` event carrying them."""
        if self.projection is None or not self.projection.usages:
            return
        usages, self.projection.usages = self.projection.usages, []
        owner = self.store.owner_of("session", self.session_id)
        doc = self.store.get("session", owner, self.session_id) if owner else None
        if doc is None or owner is None:
            return
        for usage in usages:
            doc = shapes.session_usage_added(doc, usage)
        self.store.update("session", owner, self.session_id, doc)
        self.log.emit(shapes.session_usage(doc["usage"], doc.get("budget")))

    def _interrupt(self) -> None:
        if self.runtime is not None and self.busy:
            self.runtime.interrupt()
            for future in self.waiting.values():
                future.cancel()

    # Waiting on the client -----------------------------------------------------------------

    async def _client_call(self, kind: str, name: str, tool_input: JSON,
                           tool_use_id: str) -> ToolResult:
        answer = await self._wait(tool_event_id(tool_use_id))
        return _result_of(answer)

    async def _confirm(self, tool_use_id: str) -> JSON:
        return await self._wait("confirm:" + tool_event_id(tool_use_id))

    async def _wait(self, key: str) -> JSON:
        early = self.answers.pop(key, None)
        if early is not None:
            return early
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        if not self._report_due:  # one idle event for calls made together
            self._report_due = True
            asyncio.get_running_loop().call_soon(self._report_waiting)
        return await future

    def _report_waiting(self) -> None:
        self._report_due = False
        ids = list(dict.fromkeys(key.removeprefix("confirm:") for key in self.waiting))
        if ids:
            self._set_status("idle", {"type": "requires_action", "event_ids": ids})

    def _set_status(self, status: str, stop_reason: JSON | None = None) -> None:
        if status == "running" and self.status == "running":
            return
        self.status = status
        if status == "running":
            event = shapes.status_running()
        else:
            reason = stop_reason or {"type": "end_turn"}
            event = shapes.status_idle(reason["type"], event_ids=reason.get("event_ids", ()))
        self.log.emit(event, status=status)  # the event and the document's status at once

    # Recovery ---------------------------------------------------------------------------

    async def resume(self) -> None:
        """Continues a turn a crash cut short (see the module docstring)."""
        conversation = self.store.conversation(self.session_id)
        if not conversation:
            waiting = any(e["type"] == "user.message" for e in self.store.queued(
                self.session_id))
            if self.status == "running" and not waiting:  # else: that message starts it
                self._set_status("idle", {"type": "end_turn"})
            return
        last = conversation[-1]
        if last.get("role") == "user":
            self.store.append(self.session_id, [], (len(conversation) - 1, []))
            self._start(last.get("content") or [])
            return
        calls = [b for b in last.get("content") or [] if b.get("type") == "tool_use"]
        if calls:
            self._set_status("running")
            self.turn = asyncio.ensure_future(self._finish_calls(calls))
        elif self.status == "running":
            self._set_status("idle", {"type": "end_turn"})

    async def _finish_calls(self, calls: list[JSON]) -> None:
        results = await asyncio.gather(*(self._recovered_result(call) for call in calls))
        await self._run(list(results))

    async def _recovered_result(self, call: JSON) -> JSON:
        tool_use_id, name = str(call.get("id")), str(call.get("name"))
        where, _ = self.plan.route(name)
        event_id_ = tool_event_id(tool_use_id)
        if where == "cloud":
            result = await self._recovered_cloud_result(event_id_, name, call)
        else:
            result = await self._client_call(where, name, call.get("input") or {}, tool_use_id)
        return {"type": "tool_result", "tool_use_id": tool_use_id,
                "content": result.content, "is_error": result.is_error}

    async def _recovered_cloud_result(self, event_id_: str, name: str, call: JSON
                                      ) -> ToolResult:
        logged = self._logged_result(event_id_)
        if logged is not None:
            return _result_of(logged)
        if name in IDEMPOTENT:
            if self.runtime is None:
                self.runtime = self._open()
            tool = self.runtime.ctx.config.tools[name]
            return await tool.run(call.get("input") or {}, ToolContext(
                self.workspace, env=self.env, tool_use_id=tool_use_id_of(event_id_)))
        result = ToolResult.error(INTERRUPTED_RESULT)
        self.log.emit(shapes.agent_tool_result(event_id_, INTERRUPTED_RESULT, is_error=True))
        return result

    def _logged_result(self, event_id_: str) -> JSON | None:
        page = self.store.events(self.session_id, limit=1000, page=None,
                                 types=["agent.tool_result"], order="desc")
        return next((e for e in page.items if e.get("tool_use_id") == event_id_), None)

    async def close(self) -> None:
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
        if self.runtime is not None:
            await self.runtime.aclose()


class ConfirmedTool(Tool):
    """A tool whose calls wait for the client's `user.tool_confirmation` (the agent config
    says `always_ask`): run on allow, refused with the client's message on deny."""

    def __init__(self, inner: Tool, confirm: Any) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.description = inner.description  # type: ignore[misc]
        self.input_schema = inner.input_schema  # type: ignore[misc]
        self.kind = inner.kind  # type: ignore[misc]
        self.rule_subject = inner.rule_subject  # type: ignore[misc]
        self._confirm = confirm

    def subject(self, tool_input: JSON) -> str:
        return self.inner.subject(tool_input)

    def is_read_only(self, tool_input: JSON) -> bool:
        return self.inner.is_read_only(tool_input)

    def target_paths(self, tool_input: JSON) -> list[str]:
        return self.inner.target_paths(tool_input)

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        answer = await self._confirm(ctx.tool_use_id or "")
        if answer.get("result") != "allow":
            message = answer.get("deny_message") or "The user declined this tool call."
            return ToolResult.error(str(message))
        return await self.inner.run(tool_input, ctx)


def _error_of(outcome: Outcome) -> tuple[str, str] | None:
    """(error type, message) of a turn that failed (an interrupt is no error)."""
    from wisp.engine.outcome import ApiFailed, Failed, api_error_text

    if isinstance(outcome, ApiFailed):
        kind = ("model_overloaded_error" if outcome.error.status == 529
                else "model_rate_limited_error" if outcome.error.status == 429
                else "model_request_failed_error")
        return kind, api_error_text(outcome.error)
    if isinstance(outcome, Failed):
        return "unknown_error", outcome.message
    return None


def _result_of(answer: JSON) -> ToolResult:
    content = answer.get("content") or []
    return ToolResult(content=content if content else "", is_error=bool(answer.get("is_error")),
                      data=content)


def _model_id(agent: JSON) -> str | None:
    model = agent.get("model")
    if isinstance(model, dict):
        return str(model.get("id")) if model.get("id") else None
    return str(model) if model else None
