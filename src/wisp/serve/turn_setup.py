"""What a served turn needs before its first model request: the agent as the session has
it now (`sessions.update`), the session's file resources and its agent's skills mounted
(read-only), its memory tool as its resources are now, and its agent's MCP servers
connected (`wisp.serve.session_mcp`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.serve import memory_tool, shapes, skill_mount
from wisp.serve.resources import mount
from wisp.serve.session_mcp import SessionMcp
from wisp.serve.tool_plan import ToolPlan

if TYPE_CHECKING:
    from wisp.serve.driver import SessionDriver

MOUNT_RANK = -1  # the rank of the deny rules that hold mounted resources read-only


async def follow_agent_updates(driver: SessionDriver) -> None:
    """A turn runs with the agent as the session has it now: `sessions.update` may have
    changed its tools or MCP servers since the driver's runtime was opened (a worker
    keeps it between turns), so a changed agent gets a new runtime (the conversation is
    in the store) and new MCP connections."""
    doc = driver.document()
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


async def prepare(driver: SessionDriver) -> None:
    _mount(driver)
    tools = {name: driver.gated(name, tool) for name, tool in (await driver.mcp.tools()).items()}
    if driver.runtime is not None and tools:
        driver.runtime.offer_tools(tools)


def _mount(driver: SessionDriver) -> None:
    """The session's file resources and its agent's skills into its workspace, as they
    are now."""
    owner = driver.store.owner_of("session", driver.session_id)
    doc = driver.document()
    if owner is None or doc is None:
        return
    memory_tool.install(driver.runtime,
                        memory_tool.tools_for(driver.store, driver.session_id, doc))
    try:
        # The files are held read-only before the skills (which may fail) are mounted.
        _hold_read_only(driver, mount(driver.store, owner, doc, driver.workspace))
        skill_mount.install(driver.runtime, driver.store, owner, driver.agent,
                            driver.workspace)
    except (OSError, ValueError) as exc:  # e.g. a mount path the agent made a symlink
        driver.log.emit(shapes.session_error(
            "unknown_error", f"the session's files could not be mounted: {exc}"))


def _hold_read_only(driver: SessionDriver, mounted: list[str]) -> None:
    """Mounted files stay as they were given, whoever runs as root: an Edit deny rule
    each, which the file tools obey and the sandbox turns into a read-only mount."""
    if driver.runtime is None:
        return
    from wisp.rules import Rule

    driver.runtime.replace_ranked_rules(
        "deny", MOUNT_RANK, [Rule.parse(f"Edit(/{path})", rank=MOUNT_RANK) for path in mounted])
