"""Runs the tool_use blocks of one assistant message: lookup → input check → permission →
run → one `ToolResultReady` event each. Every outcome, including a refusal or a crash
inside a tool, becomes a tool_result the model can read; the loop never dies of a tool."""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping

from wisp.engine.context import RunContext
from wisp.engine.events import PermissionDenied, ToolProgress, ToolResultReady
from wisp.engine.hook_points import fire
from wisp.engine.plan_mode import NOT_IN_PLAN_MODE, PLAN_TOOL, PlanMode, in_plan_mode
from wisp.hooks.model import HookEvent, HookOutcome
from wisp.jsontypes import JSON
from wisp.permissions.engine import Behavior, PermissionPolicy, Verdict, evaluate
from wisp.stamps import new_uuid
from wisp.tools.base import Tool, ToolContext, ToolResult, check_input
from wisp.values import Record, field

# Asks a host (the SDK's can_use_tool) about a call the rules left at "ask".
# Returns the final verdict and possibly rewritten input.
AskHost = Callable[[Tool, JSON, str, Verdict], Awaitable[tuple[Verdict, JSON]]]
# How often a running tool call is reported alive: the reference's heartbeat period.
PROGRESS_INTERVAL_S = 30.0


class ToolRunState(Record):
    policy: PermissionPolicy
    ask_host: AskHost | None = None
    denials: list[JSON] = field(default_factory=list)


def tool_result_block(tool_use_id: str, result: ToolResult) -> JSON:
    return {"tool_use_id": tool_use_id, "type": "tool_result", "content": result.content,
            "is_error": result.is_error}


def _no_such_tool(name: str, disabled: bool) -> ToolResult:
    why = f" {name} is disabled for this session." if disabled else ""
    return ToolResult(content=f"<tool_use_error>Error: No such tool available: {name}.{why}"
                      "</tool_use_error>", is_error=True, data=f"Error: No such tool: {name}")


async def _permitted(ctx: RunContext, state: ToolRunState, tool: Tool, block: JSON,
                     pre: HookOutcome) -> tuple[Verdict, JSON]:
    """`block` carries the model's input; a PreToolUse hook may have rewritten it."""
    original: JSON = block.get("input") or {}
    tool_input = pre.updated_input if pre.updated_input is not None else original
    verdict = evaluate(tool, tool_input, state.policy)
    if pre.permission_decision == "deny" or pre.blocked:
        # The model reads it as the reference words it (clients match on the prefix).
        reason = f"PreToolUse:{tool.name} hook error: {pre.reason or 'Blocked by hook'}"
        return Verdict("deny", reason, "hook"), tool_input
    if verdict.behavior == "deny":
        return verdict, tool_input  # a deny rule holds even against a hook's allow
    if pre.permission_decision == "allow":
        return rejudge_rewrite(tool, original, Verdict("allow", source="hook"), tool_input,
                               state.policy)
    if pre.permission_decision == "ask":
        verdict = Verdict("ask", pre.reason or verdict.message or _ask_message(tool), "hook")
    if verdict.behavior == "ask":
        answer, answered_input = await _ask(ctx, state, tool, tool_input,
                                            tool_use_id=str(block.get("id")), verdict=verdict)
        return rejudge_rewrite(tool, tool_input, answer, answered_input, state.policy)
    return verdict, tool_input


def rejudge_rewrite(tool: Tool, asked_input: JSON, answer: Verdict, new_input: JSON,
                    policy: PermissionPolicy) -> tuple[Verdict, JSON]:
    """An approval that came with rewritten input (the host's `updatedInput`, a
    PermissionRequest hook's) approved the call it was shown, not the rewrite: the rewrite
    is judged again, and a deny rule or a protected path it newly reaches wins."""
    if answer.behavior != "allow" or new_input == asked_input:
        return answer, new_input
    again = evaluate(tool, new_input, policy)
    if again.behavior == "deny":
        return again, new_input
    if again.source in ("protected", "analysis") and again.behavior == "ask":
        shown = evaluate(tool, asked_input, policy)
        if shown.source != again.source or shown.message != again.message:
            return Verdict("deny", f"The approved call was rewritten into one that needs its "
                           f"own approval: {again.message}", again.source), new_input
    return answer, new_input


async def _ask(ctx: RunContext, state: ToolRunState, tool: Tool, tool_input: JSON, *,
               tool_use_id: str, verdict: Verdict) -> tuple[Verdict, JSON]:
    """A call the rules left at "ask": PermissionRequest hooks may answer, then the host;
    with no host (plain -p) the reference denies and the run goes on."""
    hooked = await fire(ctx, "PermissionRequest", target=tool.name, tool_name=tool.name,
                        tool_input=tool_input, tool_use_id=tool_use_id)
    if hooked.updated_input is not None:
        tool_input = hooked.updated_input
    if hooked.permission_decision in ("allow", "deny"):
        message = hooked.reason or f"{tool.name} was denied by a PermissionRequest hook"
        behavior: Behavior = "allow" if hooked.permission_decision == "allow" else "deny"
        return Verdict(behavior, message, "hook"), tool_input
    if state.ask_host is not None:
        return await state.ask_host(tool, tool_input, tool_use_id, verdict)
    await fire(ctx, "Notification", message=f"wisp needs permission to use {tool.name}",
               notification_type="permission_prompt")
    return Verdict("deny", verdict.message, verdict.source, verdict.rule), tool_input


def _ask_message(tool: Tool) -> str:
    return f"Permission to use {tool.name} has not been granted."


async def run_one(ctx: RunContext, state: ToolRunState, block: JSON,
                  broken_input: str | None = None) -> tuple[JSON, ToolResultReady]:
    """Returns (tool_result block for the history, the event that shows it).
    `broken_input` is the raw text of a tool input that was not valid JSON."""
    name = str(block.get("name"))
    tool_use_id = str(block.get("id"))
    tool = ctx.config.tools.get(name)
    meta: JSON = {"id": tool_use_id}
    if tool is None:
        result = _no_such_tool(name, name in ctx.config.disabled_tools)
    elif name == PLAN_TOOL and not in_plan_mode(ctx):
        result = ToolResult(f"<tool_use_error>{NOT_IN_PLAN_MODE}</tool_use_error>", True,
                            NOT_IN_PLAN_MODE)
    elif broken_input is not None:
        problem = (f"The input for {name} was not a valid JSON object, so the tool did not "
                   f"run. Received: {broken_input[:500]}")
        result = ToolResult(f"<tool_use_error>{problem}</tool_use_error>", True, problem)
    else:
        result, meta = await _checked_run(ctx, state, tool, block, meta)
    result_block = tool_result_block(tool_use_id, result)
    shown = result.data if result.data is not None else result.content
    return result_block, ToolResultReady(result_block, shown, meta, new_uuid())


async def _checked_run(ctx: RunContext, state: ToolRunState, tool: Tool, block: JSON, meta: JSON
                       ) -> tuple[ToolResult, JSON]:
    asked: JSON = block.get("input") or {}
    tool_use_id = str(block.get("id"))
    # Each input is validated once: the model's before anyone is asked about it (as the
    # reference does), and a rewrite (a hook's or the host's) after the last rewrite.
    problem = check_input(tool.input_schema, asked)
    if problem:
        return _invalid(problem), meta
    pre = await fire(ctx, "PreToolUse", target=tool.name, tool_name=tool.name,
                     tool_input=asked, tool_use_id=tool_use_id)
    verdict, tool_input = await _permitted(ctx, state, tool, block, pre)
    problem = check_input(tool.input_schema, tool_input) if tool_input is not asked else None
    if problem and verdict.behavior == "allow":
        return _invalid(problem), meta
    if verdict.behavior != "allow":
        # A PreToolUse hook's refusal is its own report: no permission_denied (the
        # reference's); a PermissionRequest hook's is reported like a rule's.
        pre_denied = pre.permission_decision == "deny" or pre.blocked
        _record_denial(ctx, state, tool, block, verdict, report=not pre_denied)
        meta = {**meta, "non_execution_kind": "permission-rule" if verdict.source == "hook"
                else "user-rejected", "permission_decision": _decision("reject", verdict)}
        return ToolResult(verdict.message, True, f"Error: {verdict.message}"), meta
    meta = {**meta, "permission_decision": _decision("accept", verdict)}
    result = await _run_tool(ctx, state, tool, tool_input, tool_use_id)
    return await _post_tool(ctx, tool, tool_input, tool_use_id, result), meta


def _decision(decision: str, verdict: Verdict) -> JSON:
    """`tool_result_meta.permission_decision`; a hook's carries `reason_type` as well."""
    found: JSON = {"decision": decision, "source": verdict.source}
    if verdict.source == "hook":
        found["reason_type"] = "hook"
    return found


def _invalid(problem: str) -> ToolResult:
    return ToolResult(f"<tool_use_error>{problem}</tool_use_error>", True, problem)


async def _post_tool(ctx: RunContext, tool: Tool, tool_input: JSON, tool_use_id: str,
                     result: ToolResult) -> ToolResult:
    event: HookEvent = "PostToolUseFailure" if result.is_error else "PostToolUse"
    post = await fire(ctx, event, target=tool.name, tool_name=tool.name, tool_input=tool_input,
                      tool_use_id=tool_use_id,
                      tool_response=result.data if result.data is not None else result.content)
    notes = [*post.additional_context, *([post.reason] if post.blocked and post.reason else [])]
    if not notes:
        return result
    content = result.content
    extra = "\n\n".join(notes)
    if isinstance(content, str):
        return ToolResult(f"{content}\n\n{extra}", result.is_error, result.data)
    return ToolResult([*content, {"type": "text", "text": extra}], result.is_error, result.data)


def _record_denial(ctx: RunContext, state: ToolRunState, tool: Tool, block: JSON,
                   verdict: Verdict, *, report: bool = True) -> None:
    state.denials.append({"tool_name": tool.name, "tool_use_id": block.get("id"),
                          "tool_input": block.get("input") or {}})
    if report:
        ctx.emit(PermissionDenied(tool.name, block.get("id"), verdict.message))


def _internal_hosts(tool: Tool, policy: PermissionPolicy) -> frozenset[str]:
    """Hosts on loopback or private networks that WebFetch may reach: those a
    `WebFetch(domain:HOST)` allow rule names exactly."""
    if tool.rule_subject != "domain":
        return frozenset()
    from wisp.tools.web_fetch import allowed_internal_hosts

    return allowed_internal_hosts(policy.allow)


async def _run_tool(ctx: RunContext, state: ToolRunState, tool: Tool, tool_input: JSON,
                    tool_use_id: str) -> ToolResult:
    session = ctx.session
    policy = state.policy
    tool_ctx = ToolContext(cwd=session.cwd, abort=session.abort, processes=session.processes,
                           state=session.tool_state, tool_use_id=tool_use_id,
                           env=dict(ctx.config.env) if ctx.config.env else None,
                           run_subagent=ctx.subagents.run if ctx.subagents else None,
                           # Background work belongs to the main thread, which is told
                           # when it ends; a subagent's commands run to completion.
                           tasks=ctx.tasks if ctx.parent_tool_use_id is None else None,
                           read_filter=policy.may_read if policy.has_read_denials() else None,
                           allowed_internal_hosts=_internal_hosts(tool, policy),
                           sandbox=ctx.config.sandbox, files=ctx.config.editor_files,
                           terminals=ctx.config.editor_terminals,
                           plan=PlanMode(ctx) if tool.name == PLAN_TOOL else None)
    if ctx.config.checkpoints is not None:
        ctx.config.checkpoints.before_tool(tool, tool_input, session.cwd)
    try:
        return await _with_progress(ctx, tool, tool.run(tool_input, tool_ctx), tool_use_id)
    except Exception as exc:  # a bug in one tool must not end the session
        detail = "".join(traceback.format_exception_only(exc)).strip()
        return ToolResult.error(f"{tool.name} failed unexpectedly: {detail}")


async def _with_progress(ctx: RunContext, tool: Tool, running: Awaitable[ToolResult],
                         tool_use_id: str) -> ToolResult:
    """The tool's result; while it runs, a `ToolProgress` every few seconds
    (`WISP_TOOL_PROGRESS_INTERVAL_S`), so a UI sees the call is alive."""
    task = asyncio.ensure_future(running)
    interval = progress_interval(ctx.config.env)
    started = time.monotonic()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=interval)
            if done:
                return task.result()
            ctx.emit(ToolProgress(tool_use_id, tool.name, int(time.monotonic() - started)))
    finally:
        if not task.done():
            task.cancel()  # the call was interrupted: its tool stops with it
            with contextlib.suppress(BaseException):
                await task


def progress_interval(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get("WISP_TOOL_PROGRESS_INTERVAL_S", PROGRESS_INTERVAL_S))
    except ValueError:
        return PROGRESS_INTERVAL_S
    return value if value > 0 else PROGRESS_INTERVAL_S
