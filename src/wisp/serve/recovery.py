"""Recovery of a session a crash cut short mid-turn, as a part of `SessionDriver`.

The model conversation is in the store, written with the events in one transaction
(`wisp.serve.projection`), so the last message says where the turn was:
- a user message (a prompt or tool results) without its answer: the model call is sent
  again;
- an assistant message with tool calls: each call gets the result a client already
  posted, or is run again when it changes nothing (read, glob, grep), or is recorded as
  interrupted (bash, write, edit: it may have run in part); a client's call is waited on
  again; then the turn goes on with those results;
- an assistant message without tool calls: the turn was over; only its `idle` is due,
  or, working toward an outcome, its grading (`wisp.serve.outcomes`).
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING

from wisp.engine.tool_calls import tool_result_block
from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.session_log import tool_event_id
from wisp.serve.store.offload import off_loop
from wisp.serve.toolset import IDEMPOTENT
from wisp.tools.base import ToolResult

if TYPE_CHECKING:
    from wisp.serve.driver import SessionDriver

ANSWERS = ("user.custom_tool_result", "user.tool_result")
INTERRUPTED_RESULT = ("This tool call was cut short when the service restarted; it may "
                      "have run in part. Check its effects before running it again.")


async def resume(driver: SessionDriver) -> None:
    """Continues a turn a crash cut short (see the module docstring). A session found
    running says so first (`session.status_rescheduled`, status `rescheduling`), as the
    service does when it restarts a session's work elsewhere; `running` follows."""
    if driver.status == "running":
        driver.set_status("rescheduling")
    store = driver.store  # read off the event loop (round trips on PostgreSQL)
    conversation = await off_loop(store, store.conversation, driver.session_id)
    if not conversation:
        waiting = any(shapes.starts_a_turn(e) for e in shapes.stored_client_events(
            await off_loop(store, store.queued, driver.session_id)))
        if driver.status == "rescheduling" and not waiting:  # else: it starts the turn
            driver.set_status("idle", {"type": "end_turn"})
        return
    last = conversation[-1]
    if last.get("role") == "user":
        # After the log's queued writes, and done before the turn reads the conversation.
        await driver.log.call(functools.partial(
            driver.store.append, driver.session_id, [], (len(conversation) - 1, []),
            holder=driver.log.holder))
        driver.start(last.get("content") or [])
        return
    calls = [b for b in last.get("content") or [] if b.get("type") == "tool_use"]
    if calls:
        driver.set_status("running")
        driver.turn = asyncio.ensure_future(_finish_calls(driver, calls))
    elif await driver.outcomes.ungraded():  # the turn was over, its grading was not
        driver.set_status("running")
        driver.turn = asyncio.ensure_future(driver.grade())
    elif driver.status == "rescheduling":
        driver.set_status("idle", {"type": "end_turn"})


async def _finish_calls(driver: SessionDriver, calls: list[JSON]) -> None:
    results = await asyncio.gather(*(_recovered_result(driver, call) for call in calls))
    await driver.run(list(results))


async def _recovered_result(driver: SessionDriver, call: JSON) -> JSON:
    tool_use_id, name = str(call.get("id")), str(call.get("name"))
    where, policy = driver.plan.route(name)
    event_id = tool_event_id(tool_use_id)
    if where == "mcp":
        return await _recovered_mcp_result(driver, event_id, call)
    if where == "cloud":
        return await _recovered_cloud_result(driver, event_id, policy, call)
    answered = await _logged(driver, ANSWERS, event_id)
    if answered is not None:  # taken up just before the crash, not yet in the conversation
        return tool_result_block(tool_use_id, result_of(answered))
    result = await driver.client_call(where, name, call.get("input") or {}, tool_use_id)
    return tool_result_block(tool_use_id, result)


async def _recovered_cloud_result(driver: SessionDriver, event_id: str, policy: str,
                                  call: JSON) -> JSON:
    """The logged result; else the call runs (again) when that is safe: it changes
    nothing, or it waited on a confirmation that never came (so it never started). It
    runs through the engine, so the permission rules judge it as on any other day."""
    tool_use_id = str(call.get("id"))
    logged = await _logged(driver, ("agent.tool_result",), event_id)
    if logged is not None:
        return tool_result_block(tool_use_id, result_of(logged))
    never_started = policy == "ask" and await _logged(
        driver, ("user.tool_confirmation",), event_id) is None
    if str(call.get("name")) in IDEMPOTENT or never_started:
        # Logged as the call's `agent.tool_result`.
        return await (await driver.opened()).run_tool_call(call)
    driver.log.emit(shapes.agent_tool_result(event_id, INTERRUPTED_RESULT, is_error=True))
    return tool_result_block(tool_use_id, ToolResult.error(INTERRUPTED_RESULT))


async def _recovered_mcp_result(driver: SessionDriver, event_id: str, call: JSON) -> JSON:
    """The logged result of an MCP call; else it is recorded as interrupted (a remote
    tool may have acted in part: it is never called twice)."""
    tool_use_id = str(call.get("id"))
    logged = await _logged(driver, ("agent.mcp_tool_result",), event_id)
    if logged is not None:
        return tool_result_block(tool_use_id, result_of(logged))
    driver.log.emit(shapes.agent_mcp_tool_result(event_id, INTERRUPTED_RESULT, is_error=True))
    return tool_result_block(tool_use_id, ToolResult.error(INTERRUPTED_RESULT))


async def _logged(driver: SessionDriver, kinds: tuple[str, ...],
                  event_id: str) -> JSON | None:
    """The latest logged event of `kinds` about the call `event_id` that was taken up:
    the service's result, or a client's answer or confirmation (read off the loop)."""
    page = await off_loop(driver.store, functools.partial(
        driver.store.events, driver.session_id, limit=1000, page=None, types=list(kinds),
        order="desc"))
    return next((e for e in page.items if e.get("processed_at") is not None and event_id in (
        e.get("custom_tool_use_id"), e.get("tool_use_id"), e.get("mcp_tool_use_id"))), None)


def result_of(answer: JSON) -> ToolResult:
    """A client's answer event (`user.*_tool_result`) as a tool result."""
    content = answer.get("content") or []
    return ToolResult(content=content if content else "", is_error=bool(answer.get("is_error")),
                      data=content)
