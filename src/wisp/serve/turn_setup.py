"""What a served turn needs before its first model request: its runtime opened (the
store read off the event loop, `stored_parts`), the agent as the session has
it now (`sessions.update`), the session's file resources and its agent's skills mounted
(read-only), its memory tool as its resources are now, and its agent's MCP servers
connected (`wisp.serve.session_mcp`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.project.skills import Skill
from wisp.serve import memory_tool, shapes, skill_mount, threads
from wisp.serve.projection import SessionProjection
from wisp.serve.resources import mount
from wisp.serve.session_mcp import SessionMcp
from wisp.serve.store.offload import off_loop
from wisp.serve.tool_plan import ToolPlan
from wisp.tools.base import Tool

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime
    from wisp.serve.driver import SessionDriver
    from wisp.serve.store.base import Store

MOUNT_RANK = -1  # the rank of the deny rules that hold mounted resources read-only


async def follow_agent_updates(driver: SessionDriver) -> None:
    """A turn runs with the agent as the session has it now: `sessions.update` may have
    changed its tools or MCP servers since the driver's runtime was opened (a worker
    keeps it between turns), so a changed agent gets a new runtime (the conversation is
    in the store) and new MCP connections."""
    doc = await off_loop(driver.store, driver.document)
    agent = doc.get("agent") if doc is not None else None
    if doc is None or not agent or agent == driver.agent:
        return
    driver.agent = agent
    driver.plan = ToolPlan(agent, driver.environment)
    if driver.runtime is not None:
        await driver.runtime.aclose()
        driver.runtime = None
    await driver.mcp.close()
    driver.mcp = SessionMcp(driver.store, doc, agent, driver.environment, env=driver.env,
                            log=driver.log, plan=driver.plan)


def stored_parts(driver: SessionDriver) -> tuple[list[JSON], dict[str, Tool]]:
    """What opening a driver's runtime reads from the store (store calls only: it runs
    on the store's thread pool, see `SessionDriver.opened`): the tools the session's
    document gives (memory, delegation), then the model conversation (possibly long)."""
    tools = {**memory_tool.tools_for(driver.store, driver.session_id, driver.document()),
             **threads.tools_for(driver)}
    return driver.store.conversation(driver.session_id), tools


def open_runtime(driver: SessionDriver, conversation: list[JSON],
                 stored_tools: dict[str, Tool]) -> Runtime:
    """The driver's runtime over what `stored_parts` read (on the event loop)."""
    from wisp.runtime.config import RuntimeConfig
    from wisp.runtime.runtime import Runtime
    from wisp.serve.driver import model_id
    from wisp.serve.operator_policy import operator_policy

    plan = driver.plan
    projection = SessionProjection(driver.log, plan.route, len(conversation), plan.mcp_call)
    sandbox = None
    if driver.housing is not None and not plan.self_hosted:
        sandbox = driver.housing.sandbox(driver.workspace, driver.env, driver.environment)
    # The store keeps the conversation and the session log records it; the tools are
    # the agent's, not wisp's built-ins.
    config = RuntimeConfig(
        cwd=driver.workspace, env=driver.env, model=model_id(driver.agent),
        system_prompt=driver.agent.get("system") or None, tools=(),
        allowed_tools=plan.allow_rules(driver.workspace),
        permission_mode="acceptEdits", permission_mode_set=True,
        no_session_persistence=True, include_partial_messages=True,
        setting_sources=(), settings=operator_policy(driver.env),
        history=conversation, recorder=projection,
        host_tools=driver.host_tools(stored_tools), sandbox=sandbox)
    runtime = Runtime.open(config, projection, model=driver.model)
    projection.on_status = driver.set_status
    driver.projection = projection
    return runtime


async def prepare(driver: SessionDriver) -> None:
    await _mount(driver)
    tools = {name: driver.gated(name, tool) for name, tool in (await driver.mcp.tools()).items()}
    if driver.runtime is not None and tools:
        driver.runtime.offer_tools(tools)


@dataclass
class Mounted:
    """What `mount_blocking` did: what the runtime is to be given, on the event loop."""

    memory: dict[str, Tool]
    files: list[str] | None = None  # None: the files could not be mounted
    skills: dict[str, Skill] | None = None  # None: the skills could not be mounted
    error: str | None = None


async def _mount(driver: SessionDriver) -> None:
    """The session's file resources and its agent's skills into its workspace, as they
    are now. The store calls and file copies run on the store's thread pool (on
    PostgreSQL each is a round trip, or a lock wait); the runtime changes here."""
    mounted = await off_loop(driver.store, mount_blocking, driver.store, driver.session_id,
                             driver.agent, driver.workspace)
    if mounted is None:
        return
    memory_tool.install(driver.runtime, mounted.memory)
    if mounted.files is not None:
        _hold_read_only(driver, mounted.files)
    if mounted.skills is not None:
        skill_mount.give(driver.runtime, mounted.skills, driver.workspace)
    if mounted.error is not None:
        driver.log.emit(shapes.session_error(
            "unknown_error", f"the session's files could not be mounted: {mounted.error}"))


def mount_blocking(store: Store, session_id: str, agent: Mapping[str, Any],
                   workspace: Path) -> Mounted | None:
    """`_mount`'s store calls and file copies (None: the session is gone)."""
    owner = store.owner_of("session", session_id)
    doc = store.get("session", owner, session_id) if owner else None
    if owner is None or doc is None:
        return None
    mounted = Mounted(memory_tool.tools_for(store, session_id, doc))
    try:
        # The files are held read-only before the skills (which may fail) are mounted.
        mounted.files = mount(store, owner, doc, workspace)
        mounted.skills = skill_mount.mount_all(store, owner, agent, workspace)
    except (OSError, ValueError) as exc:  # e.g. a mount path the agent made a symlink
        mounted.error = str(exc)
    return mounted


def _hold_read_only(driver: SessionDriver, mounted: list[str]) -> None:
    """Mounted files stay as they were given, whoever runs as root: an Edit deny rule
    each, which the file tools obey and the sandbox turns into a read-only mount."""
    if driver.runtime is None:
        return
    from wisp.rules import Rule

    driver.runtime.replace_ranked_rules(
        "deny", MOUNT_RANK, [Rule.parse(f"Edit(/{path})", rank=MOUNT_RANK) for path in mounted])
