"""The agent loop in process, against ScriptedModel / FunctionModel: text, tools, max_tokens
recovery, stop hooks, limits, API failures and retries, interrupts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.engine.conftest import (
    FnTool,
    build_ctx,
    echo_tool,
    run_async,
    run_loop,
    run_prompt,
)
from wisp.engine.decide import RECOVERY_PROMPT, MaxTurnsReached
from wisp.engine.events import RunFinished
from wisp.engine.loop import INTERRUPTED, INTERRUPTED_TOOL_RESULT, INTERRUPTED_TOOLS
from wisp.engine.outcome import Aborted, ApiFailed, HookStopped, LimitHit, Success
from wisp.models.base import ModelRequest
from wisp.testing import FunctionModel, ScriptedModel, reply
from wisp.tools.base import ToolResult

JSON = dict[str, Any]


def texts(message: JSON) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


# Plain runs ------------------------------------------------------------------------------


def test_a_text_reply_ends_the_run(cwd: Path) -> None:
    model = ScriptedModel(reply.text("hello there"))
    run = run_loop(model, "hi", cwd=cwd)
    assert (run.terminal_reason, run.is_error, run.text) == ("completed", False, "hello there")
    assert (run.num_turns, run.stop_reason) == (1, "end_turn")
    assert model.requests[0].body["messages"] == [{"role": "user", "content": "hi"}]
    assert run.history[-1] == {"role": "assistant",
                               "content": [{"type": "text", "text": "hello there"}]}
    assert run.assistant_blocks() == [{"type": "text", "text": "hello there"}]
    assert run.outcome == Success("hello there")
    assert isinstance(run.events[-1], RunFinished) and run.events[-1].outcome == run.outcome


def test_a_tool_loop_runs_each_call_and_sends_the_results_back(cwd: Path) -> None:
    tool = echo_tool()
    model = ScriptedModel(
        reply.tool_uses([("Echo", {"n": 1}), ("Echo", {"n": 2})], text="two calls"),
        reply.tool_use("Nope", {}),
        reply.text("all done"),
    )
    run = run_loop(model, "go", cwd=cwd, tools=[tool])
    assert (run.terminal_reason, run.text, run.num_turns) == ("completed", "all done", 3)
    assert tool.calls == [{"n": 1}, {"n": 2}]
    second = model.requests[1].body["messages"]
    results = second[-1]["content"]
    assert [r["content"] for r in results] == ["echo: {'n': 1}", "echo: {'n': 2}"]
    assert [r["tool_use_id"] for r in results] == [
        b["id"] for b in second[-2]["content"] if b["type"] == "tool_use"]
    # An unknown tool is an error result the model reads; the loop goes on.
    unknown = model.requests[2].body["messages"][-1]["content"][0]
    assert unknown["is_error"] and "No such tool available: Nope" in unknown["content"]
    assert len(run.tool_results()) == 3
    assert model.requests[0].body["tools"][0]["name"] == "Echo"


def test_a_tool_that_raises_becomes_an_error_result(cwd: Path) -> None:
    def broken(_: JSON) -> ToolResult:
        raise RuntimeError("kaput")

    model = ScriptedModel(reply.tool_use("Broken", {}), reply.text("ok"))
    run = run_loop(model, cwd=cwd, tools=[FnTool("Broken", broken)])
    result = model.requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "Broken failed unexpectedly: RuntimeError: kaput" in (
        result["content"])
    assert run.text == "ok"


def test_a_tool_the_rules_leave_at_ask_is_denied_without_a_host(cwd: Path) -> None:
    tool = FnTool("Exec", lambda _: ToolResult("ran"), kind="execute")
    model = ScriptedModel(reply.tool_use("Exec", {}), reply.text("ok"))
    run = run_loop(model, cwd=cwd, tools=[tool])
    assert tool.calls == []
    assert run.result["permission_denials"][0]["tool_name"] == "Exec"
    assert len(run.system("permission_denied")) == 1


def test_a_function_model_reacts_to_the_conversation(cwd: Path) -> None:
    def play(request: ModelRequest) -> Any:
        last = request.messages[-1]["content"]
        if isinstance(last, str):
            return reply.tool_use("Echo", {"said": last})
        return f"the tool said {last[0]['content']}"

    model = FunctionModel(play)
    run = run_loop(model, "ping", cwd=cwd, tools=[echo_tool()])
    assert run.text == "the tool said echo: {'said': 'ping'}"
    assert len(model.requests) == 2


def test_an_async_function_model(cwd: Path) -> None:
    async def play(request: ModelRequest) -> Any:
        await asyncio.sleep(0)
        return reply.text(f"{len(request.messages)} message(s)")

    assert run_loop(FunctionModel(play), cwd=cwd).text == "1 message(s)"


# max_tokens recovery ---------------------------------------------------------------------


def test_max_tokens_is_continued_then_the_run_completes(cwd: Path) -> None:
    model = ScriptedModel(reply.max_tokens("part one"), reply.text("part two"))
    run = run_loop(model, cwd=cwd)
    assert (run.text, run.num_turns, run.stop_reason) == ("part two", 2, "end_turn")
    second = model.requests[1].body["messages"]
    assert texts(second[-2]) == ["part one"]
    assert second[-1] == {"role": "user", "content": RECOVERY_PROMPT}


def test_max_tokens_is_continued_at_most_three_times(cwd: Path) -> None:
    model = ScriptedModel(*(reply.max_tokens(f"part {n}") for n in range(5)))
    run = run_loop(model, cwd=cwd)
    assert len(model.requests) == 4  # the first call and three continuations
    assert model.remaining == 1
    assert (run.terminal_reason, run.text, run.stop_reason) == ("completed", "part 3",
                                                                "max_tokens")
    prompts = [m for m in run.history if m["role"] == "user"][1:]
    assert [texts(m) for m in prompts] == [[RECOVERY_PROMPT]] * 3


# Hooks -----------------------------------------------------------------------------------


def test_a_stop_hook_can_send_the_model_back_to_work_once(cwd: Path) -> None:
    def stop_hook(payload: JSON) -> JSON:
        if payload["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "run the tests first"}

    model = ScriptedModel(reply.text("done?"), reply.text("tests pass"))
    run = run_loop(model, cwd=cwd, hooks={"Stop": stop_hook})
    assert (run.text, run.num_turns) == ("tests pass", 2)
    assert model.requests[1].body["messages"][-1] == {"role": "user",
                                                      "content": "run the tests first"}
    assert [p["stop_hook_active"] for _, p in run.hook_calls] == [False, True]
    assert run.hook_calls[0][1]["hook_event_name"] == "Stop"


def test_a_stop_hook_that_says_stop_ends_the_run(cwd: Path) -> None:
    model = ScriptedModel(reply.text("first"), reply.text("never"))
    run = run_loop(model, cwd=cwd, hooks={"Stop": lambda _: {
        "decision": "block", "reason": "ignored", "continue": False}})
    assert (run.terminal_reason, run.text, len(model.requests)) == (
        "stop_hook_prevented", "first", 1)
    assert run.is_error is False


def test_a_user_prompt_submit_hook_can_block_before_any_call(cwd: Path) -> None:
    """Nothing goes to the model; the result is a success whose text says why (the
    reference's), with no terminal reason; the prompt is not kept."""
    model = ScriptedModel(reply.text("never"))
    run = run_loop(model, cwd=cwd, hooks={"UserPromptSubmit": lambda p: {
        "decision": "block", "reason": f"not {p['prompt']!r}"}})
    notice = "UserPromptSubmit operation blocked by hook:\nnot 'hi'\n\nOriginal prompt: hi"
    assert (run.result["subtype"], run.is_error, run.text) == ("success", False, notice)
    assert "terminal_reason" not in run.result and run.errors == []
    assert run.outcome == HookStopped(notice, reason="not 'hi'", terminal_reason=None)
    assert model.requests == [] and run.num_turns == 0
    assert run.history == []
    [shown] = run.system("informational")
    assert (shown["content"], shown["level"], shown["prevent_continuation"]) == (
        notice, "warning", True)
    assert shown["prompt_submit_outcome"] == {"kind": "blocked_by_hook", "prompt_kept": False,
                                              "reason": "not 'hi'"}


def test_continue_false_from_user_prompt_submit_keeps_the_prompt_unanswered(
        cwd: Path) -> None:
    model = ScriptedModel(reply.text("never"))
    run = run_loop(model, cwd=cwd, hooks={"UserPromptSubmit": lambda _: {
        "continue": False, "stopReason": "maintenance"}})
    assert (run.text, run.is_error, run.num_turns) == (
        "Operation stopped by hook: maintenance", False, 0)
    assert model.requests == []
    assert texts(run.history[0])[0] == "hi"  # kept, with a note that it went unanswered
    [shown] = run.system("informational")
    assert shown["prompt_submit_outcome"] == {"kind": "stopped_by_hook", "prompt_kept": True,
                                              "reason": "maintenance"}


def test_continue_false_from_pre_tool_use_ends_the_run_once_the_tools_ran(cwd: Path) -> None:
    tool = echo_tool()
    model = ScriptedModel(reply.tool_uses([("Echo", {"n": 1}), ("Echo", {"n": 2})]),
                          reply.text("never"))
    run = run_loop(model, cwd=cwd, tools=[tool], hooks={"PreToolUse": lambda _: {
        "continue": False, "stopReason": "that will do"}})
    assert (run.result["subtype"], run.is_error, run.terminal_reason) == (
        "success", False, "hook_stopped")
    assert len(tool.calls) == 2 and len(model.requests) == 1
    assert (run.num_turns, run.stop_reason, run.text) == (2, "tool_use", "")


def test_a_hook_system_message_is_shown_to_the_user(cwd: Path) -> None:
    model = ScriptedModel(reply.tool_use("Echo", {}), reply.text("done"))
    run = run_loop(model, cwd=cwd, tools=[echo_tool()], hooks={"PreToolUse": lambda _: {
        "systemMessage": "careful now"}})
    [shown] = run.system("informational")
    assert (shown["content"], shown["level"]) == ("PreToolUse:Echo says: careful now", "notice")


def test_a_user_prompt_submit_hook_adds_context(cwd: Path) -> None:
    model = ScriptedModel(reply.text("ok"))
    run_loop(model, "q", cwd=cwd, hooks={"UserPromptSubmit": lambda _: {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "it is Tuesday"}}})
    assert texts(model.requests[0].body["messages"][0]) == ["q", "it is Tuesday"]


# Limits ----------------------------------------------------------------------------------


def test_max_turns_stops_the_loop(cwd: Path) -> None:
    model = ScriptedModel(default=reply.tool_use("Echo", {}))
    run = run_loop(model, cwd=cwd, tools=[echo_tool()], max_turns=2)
    assert (run.terminal_reason, run.is_error) == ("max_turns", True)
    assert run.errors == ["Reached maximum number of turns (2)"]
    assert run.outcome == LimitHit(MaxTurnsReached(2))
    assert len(model.requests) == 2
    assert run.num_turns == 3  # the refused turn is counted, as the reference does
    assert run.history[-1]["content"][0]["type"] == "tool_result"  # the history stays valid


def test_the_budget_stops_before_tools_run(cwd: Path) -> None:
    tool = echo_tool()
    usage = {"input_tokens": 1_000_000}  # several dollars at any list price
    model = ScriptedModel(reply.tool_use("Echo", {}, usage=usage), reply.text("never"))
    run = run_loop(model, cwd=cwd, tools=[tool], max_budget_usd=0.5)
    assert (run.terminal_reason, run.is_error) == ("budget_exhausted", True)
    assert tool.calls == [] and len(model.requests) == 1
    assert run.cost_usd > 0.5


def test_a_spent_budget_refuses_the_next_call(cwd: Path) -> None:
    usage = {"input_tokens": 1_000_000}
    model = ScriptedModel(reply.text("expensive", usage=usage), reply.text("second"))
    ctx, state, sink = build_ctx(model, cwd, max_budget_usd=0.5)

    async def two_prompts() -> Any:
        first = await run_prompt(ctx, state, sink, "one")
        second = await run_prompt(ctx, state, sink, "two")
        return first, second

    first, second = run_async(two_prompts())
    # The call that overspent ends its run (checked after every call), as the reference does.
    assert (first.terminal_reason, first.stop_reason, first.num_turns) == (
        "budget_exhausted", "end_turn", 1)
    assert "result" not in first.result
    assert second.terminal_reason == "budget_exhausted" and len(model.requests) == 1
    assert second.num_turns == 1  # the refused turn is counted, as the reference does


# API failures ----------------------------------------------------------------------------


def test_a_client_error_fails_the_run_without_retrying(cwd: Path) -> None:
    model = ScriptedModel(reply.error(400, "bad request"), reply.text("never"))
    run = run_loop(model, cwd=cwd)
    assert (run.terminal_reason, run.is_error, run.api_error_status) == ("api_error", True, 400)
    assert run.text == "API Error: 400 bad request"
    assert isinstance(run.outcome, ApiFailed) and run.outcome.error.status == 400
    assert len(model.requests) == 1 and run.system("api_retry") == []
    assert run.assistant_blocks() == [{"type": "text", "text": "API Error: 400 bad request"}]


def test_overload_cut_and_in_stream_errors_are_retried(cwd: Path) -> None:
    model = ScriptedModel(reply.error(529, "Overloaded"), reply.cut(2), reply.sse_error(),
                          reply.text("finally"))
    run = run_loop(model, cwd=cwd)
    assert (run.terminal_reason, run.text) == ("completed", "finally")
    retries = run.system("api_retry")
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    assert [r["error_status"] for r in retries] == [529, None, 529]


def test_retries_give_up_after_max_retries(cwd: Path) -> None:
    model = ScriptedModel(default=reply.error(500, "boom"))
    run = run_loop(model, cwd=cwd)
    assert (run.terminal_reason, run.api_error_status) == ("api_error", 500)
    assert len(model.requests) == 4  # max_retries=3 in build_ctx


def test_a_cut_after_a_complete_tool_use_runs_it(cwd: Path) -> None:
    tool = echo_tool()
    # message_start, ping, 5 events of the tool_use block (start, 3 deltas, stop): cut next.
    model = ScriptedModel(reply.cut(7, reply.tool_use("Echo", {"a": 1})), reply.text("ok"))
    run = run_loop(model, cwd=cwd, tools=[tool])
    assert tool.calls == [{"a": 1}] and run.text == "ok"
    assert len(model.requests) == 2


def test_a_cut_after_some_text_continues_with_a_prefill(cwd: Path) -> None:
    base = reply.message([{"type": "text", "text": "shown "},
                          {"type": "text", "text": "never"}])
    model = ScriptedModel(reply.cut(7, base), reply.text("rest"))
    run = run_loop(model, cwd=cwd)
    prefill = model.requests[1].body["messages"][-1]
    assert prefill == {"role": "assistant", "content": [{"type": "text", "text": "shown"}]}
    assert run.text == "shown rest"


# Interrupts ------------------------------------------------------------------------------


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.001)


def deltas(emitted: list[JSON]) -> list[str]:
    return [e["event"]["delta"].get("text", "") for e in emitted
            if e.get("type") == "stream_event" and e["event"]["type"] == "content_block_delta"]


def test_an_interrupt_while_streaming_keeps_the_partial_text(cwd: Path) -> None:
    model = ScriptedModel(reply.slow("one two three four five six", 0.02, chunks=6))
    ctx, state, sink = build_ctx(model, cwd, include_partial_messages=True)

    async def interrupted() -> Any:
        task = asyncio.ensure_future(run_prompt(ctx, state, sink, "talk"))
        await wait_until(lambda: len(deltas(sink.items)) >= 2)
        task.cancel()
        return await task

    run = run_async(interrupted())
    assert (run.terminal_reason, run.errors) == ("aborted_streaming", ["Interrupted by user"])
    assert run.outcome == Aborted("streaming")
    said = "".join(deltas(run.emitted))
    assert said.startswith("one ") and said != "one two three four five six"
    partial, note = run.history[-2:]
    assert partial == {"role": "assistant", "content": [{"type": "text", "text": said}]}
    assert texts(note) == [INTERRUPTED]
    shown = [e for e in run.emitted if e.get("type") == "assistant"]
    assert shown[-1].get("aborted") is True
    assert shown[-1]["message"]["content"] == [{"type": "text", "text": said}]
    # The stream the client saw is closed: the open block stops, then the message.
    closing = [e["event"]["type"] for e in run.emitted if e.get("type") == "stream_event"][-3:]
    assert closing == ["content_block_stop", "message_delta", "message_stop"]


def test_an_interrupt_while_a_tool_runs_answers_every_tool_use(cwd: Path) -> None:
    started = asyncio.Event()

    async def hang(_: JSON) -> ToolResult:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError

    model = ScriptedModel(reply.tool_uses([("Echo", {}), ("Hang", {}), ("Echo", {})]))
    ctx, state, sink = build_ctx(model, cwd, tools=[echo_tool(), FnTool("Hang", hang)])

    async def interrupted() -> Any:
        task = asyncio.ensure_future(run_prompt(ctx, state, sink, "work"))
        await asyncio.wait_for(started.wait(), 5)
        task.cancel()
        return await task

    run = run_async(interrupted())
    assert run.terminal_reason == "aborted_tools" and run.outcome == Aborted("tools")
    last = run.history[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "tool_result", "text"]
    assert last[0]["content"] == "echo: {}"  # finished before the interrupt: kept
    assert [b["content"] for b in last[1:3]] == [INTERRUPTED_TOOL_RESULT] * 2
    assert last[3]["text"] == INTERRUPTED_TOOLS
    tool_uses = [b["id"] for b in run.history[-2]["content"] if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in last[:3]] == tool_uses


def test_a_tool_that_sets_the_abort_flag_ends_the_run(cwd: Path) -> None:
    # As a host's deny with `interrupt: true` does: the run ends through the abort path.
    model = ScriptedModel(reply.tool_use("Stopper", {}), reply.text("never"))
    ctx, state, sink = build_ctx(model, cwd)

    def stopper(_: JSON) -> ToolResult:
        ctx.session.abort.set()
        return ToolResult("stopping", is_error=True)

    ctx.config.tools["Stopper"] = FnTool("Stopper", stopper)
    run = run_async(run_prompt(ctx, state, sink, "go"))
    assert run.terminal_reason == "aborted_tools" and len(model.requests) == 1
    assert texts(run.history[-1])[-1] == INTERRUPTED_TOOLS


def test_the_session_goes_on_after_an_interrupt(cwd: Path) -> None:
    model = ScriptedModel(reply.slow("long answer", 0.05), reply.text("fresh"))
    ctx, state, sink = build_ctx(model, cwd)

    async def both() -> Any:
        task = asyncio.ensure_future(run_prompt(ctx, state, sink, "one"))
        await model.wait_for_requests(1)
        task.cancel()  # before any text arrived: nothing to keep
        await task
        return await run_prompt(ctx, state, sink, "two")

    run = run_async(both())
    assert run.text == "fresh"
    sent = model.requests[1].body["messages"]
    assert len(sent) == 1 and texts(sent[0]) == ["one", INTERRUPTED, "two"]
