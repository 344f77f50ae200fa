"""Multi-agent sessions: a coordinator agent (`multiagent: {type: "coordinator"}`)
delegates to the agents of its roster, each running as a thread of the session.

The roster is resolved when the agent is saved (each entry pinned to an agent version)
and snapshotted whole when a session starts. The coordinator's agent gets the
`delegate_to_agent` tool; a call runs the named agent's turn as the session thread of
that agent (one per roster agent, made at its first call, its conversation kept between
calls): the thread has its own event log under its id (`sessions.threads.events`), the
session's log gets `session.thread_created`, `agent.thread_message_sent`,
`session.thread_status_running` / `_idle` and `agent.thread_message_received` (the
delegate's last message, which is also the tool's result). Threads delegate no further.
A thread's turn runs inside the coordinator's tool call: a crash mid-call is recovered
as the coordinator's interrupted tool call, not resumed in the thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from wisp.jsontypes import JSON
from wisp.serve.http import HttpError
from wisp.serve.shapes import SessionStatus, ThreadDocument, as_session_agent, as_thread
from wisp.serve.shapes import multiagent as thread_shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.serve.tool_plan import ToolPlan
from wisp.tools.base import Tool, ToolContext, ToolKind, ToolResult

if TYPE_CHECKING:
    from wisp.serve.driver import SessionDriver
    from wisp.serve.shapes import SessionAgent

TOOL = "delegate_to_agent"


def kind(session_id: str) -> str:
    """The store kind of a session's threads (listed per session)."""
    return f"thread:{session_id}"


def resolve_roster(store: Store, owner: str, fields: Mapping[str, Any]) -> None:
    """Pins each roster entry of `fields["multiagent"]` to an agent version of the owner
    (the latest when none is named); an unknown agent or version is a 400 naming it."""
    roster = fields.get("multiagent")
    if not roster:
        return
    for i, entry in enumerate(roster["agents"]):
        where = f"multiagent.agents[{i}]"
        agent = store.get("agent", owner, entry["id"])
        version = entry["version"] or (agent or {}).get("version")
        if agent is None or store.get("agent_version", owner,
                                      f"{entry['id']}@{version}") is None:
            raise HttpError(400, "invalid_request_error",
                            f"{where}: agent {entry['id']} (version {version}) not found")
        entry["version"] = int(str(version))


def session_roster(store: Store, owner: str, environment: JSON | None,
                   snapshot: SessionAgent) -> SessionAgent:
    """The session's agent snapshot with its roster's agents snapshotted whole. A thread
    runs inside its coordinator's tool call, so nothing in it may wait on the client: a
    roster agent with custom tools or `always_ask` tools, or a coordinator in a
    self-hosted environment, is refused (400)."""
    from wisp.serve import shapes

    roster = snapshot.get("multiagent")
    if not roster:
        return snapshot
    agents = []
    for entry in roster["agents"]:
        doc = store.get("agent_version", owner, f"{entry['id']}@{entry['version']}")
        if doc is None:
            raise HttpError(400, "invalid_request_error",
                            f"agent.multiagent: agent {entry['id']} version "
                            f"{entry['version']} not found")
        agent = shapes.session_agent({**doc, "id": entry["id"]})
        _check_delegate(agent, environment)
        agent.pop("multiagent", None)  # a thread's agent has none: it delegates no further
        agents.append(agent)
    return {**snapshot, "multiagent": {"type": "coordinator", "agents": agents}}


def _check_delegate(agent: Mapping[str, Any], environment: JSON | None) -> None:
    plan = ToolPlan(agent, environment)
    waits = [name for name, policy in plan.toolset.items() if policy == "ask"]
    waits += [str(tool["name"]) for tool in plan.custom]
    if plan.self_hosted or waits:
        raise HttpError(400, "invalid_request_error", "agent.multiagent: agent "
                        f"{agent['name']} would wait on the client in a thread "
                        f"({', '.join(waits) or 'self_hosted environment'}); threads "
                        "here run only tools the service runs without asking")


def tools_for(parent: SessionDriver) -> dict[str, Tool]:
    """The coordinator's delegation tool ({} for an agent without a roster, or a thread)."""
    roster = (parent.agent.get("multiagent") or {}).get("agents") or []
    owner = parent.store.owner_of("session", parent.session_id)
    if not roster or owner is None:
        return {}
    return {TOOL: DelegateTool(parent, owner, roster)}


class DelegateTool(Tool):
    kind: ClassVar[ToolKind] = "execute"

    def __init__(self, parent: SessionDriver, owner: str, roster: list[JSON]) -> None:
        self.name = TOOL  # type: ignore[misc]
        names = [str(a["name"]) for a in roster]
        self.description = (  # type: ignore[misc]
            "Hand a task to one of your agents and get its answer. Each agent keeps its "
            "conversation between calls. Agents: " + "; ".join(
                f"{a['name']}: {a.get('description') or 'no description'}" for a in roster))
        self.input_schema = {  # type: ignore[misc]
            "type": "object", "required": ["agent", "message"], "properties": {
                "agent": {"type": "string", "enum": names},
                "message": {"type": "string", "description": "What the agent should do."}}}
        self.parent = parent
        self.owner = owner
        self.roster = {str(a["name"]): a for a in roster}

    def is_read_only(self, tool_input: JSON) -> bool:
        # The delegate's own tools are judged by its own permission engine when it runs.
        return True

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        agent = self.roster.get(str(tool_input.get("agent")))
        message = tool_input.get("message")
        if agent is None or not isinstance(message, str) or not message:
            return ToolResult.error(f"agent: expected one of {', '.join(self.roster)}, "
                                    "and a message")
        answer = await self._delegate(agent, message)
        return ToolResult(answer or "(the agent gave no answer)")

    async def _thread(self, agent: JSON) -> ThreadDocument:
        thread, created = await off_loop(self.parent.store, self._find_or_create, agent)
        if created:
            self.parent.log.emit(thread_shapes.thread_created(thread["id"], agent["name"]))
        return thread

    def _find_or_create(self, agent: JSON) -> tuple[ThreadDocument, bool]:
        """The roster agent's thread, made if new (on the store's thread pool)."""
        store, session_id = self.parent.store, self.parent.session_id
        page = store.list(kind(session_id), self.owner, limit=100, page=None,
                          include_archived=False)
        for thread in page.items:
            if thread["agent"]["id"] == agent["id"]:
                return as_thread(thread), False
        # a roster entry is a `session_agent` snapshot (`session_roster` made it)
        new = thread_shapes.thread_document(session_id, as_session_agent(agent), None)
        store.create(kind(session_id), self.owner, new)
        return new, True

    async def _set(self, thread: ThreadDocument, status: SessionStatus) -> None:
        from wisp.serve import shapes

        now = shapes.timestamp()
        thread["status"] = status
        thread["updated_at"] = now
        # Only the status, merged into the thread as stored: the API may have archived
        # it meanwhile, and that is kept.
        store = self.parent.store
        await off_loop(store, store.modify, kind(self.parent.session_id), self.owner,
                       thread["id"], lambda doc: {**doc, "status": status, "updated_at": now})
        self.parent.log.emit(thread_shapes.thread_status(thread["id"],
                                                         thread["agent"]["name"], status))

    async def _delegate(self, agent: JSON, message: str) -> str:
        thread = await self._thread(agent)
        name = str(agent["name"])
        self.parent.log.emit(thread_shapes.message_sent(thread["id"], name, message))
        await self._set(thread, "running")
        child = self._child(thread)
        try:
            await self._open(child, thread)
            child.log.emit(thread_shapes.message_received(self.parent.session_id, None,
                                                          message))
            # The session's budget covers its threads: the coordinator's spend so far is
            # counted before the thread starts, and the thread's before it goes on.
            await self.parent.account_usage()
            await child.run(message)
            await self.parent.within_budget()
            answer = await off_loop(self.parent.store, _last_message, self.parent.store,
                                    thread["id"])
            self.parent.log.emit(thread_shapes.message_received(thread["id"], name, answer))
        finally:  # an interrupted coordinator leaves no thread marked running
            await child.close()
            await self._set(thread, "idle")
        return answer

    def _child(self, thread: ThreadDocument) -> SessionDriver:
        parent = self.parent
        child = type(parent)(
            parent.store, parent.log.fanout, {"id": thread["id"], "status": "idle"},
            thread["agent"], parent.environment, env=parent.env, workspace=parent.workspace,
            housing=parent.housing, model=parent.model, billed_to=parent.billed_to)
        child.mcp.share_vaults(parent.mcp)
        return child

    async def _open(self, child: SessionDriver, thread: ThreadDocument) -> None:
        """The delegate's runtime, with its skills: they were mounted with the
        coordinator's (same workspace), and are offered here. Both read the store off
        the event loop (`opened`, `offer`); awaited inside `_delegate`'s `try`, so an
        interrupt meanwhile still closes the delegate and marks its thread idle."""
        from wisp.serve import skill_mount

        await skill_mount.offer(await child.opened(), self.parent.store, self.owner,
                                thread["agent"], self.parent.workspace)


def _last_message(store: Store, thread_id: str) -> str:
    page = store.events(thread_id, limit=1, page=None, order="desc",
                        types=["agent.message"])
    if not page.items:
        return ""
    return "".join(str(b.get("text") or "") for b in page.items[0].get("content") or [])
