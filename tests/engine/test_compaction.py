"""Automatic compaction: the pure parts, `maybe_compact` against a ScriptedModel, and a
compaction inside a running loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.conftest import MODEL, build_ctx, echo_tool, run_async, run_loop
from wisp.engine.compaction import (
    DEFAULT_PERCENT,
    SUMMARY_PREFIX,
    SUMMARY_REQUEST,
    context_tokens,
    maybe_compact,
    split_tail,
    threshold_tokens,
)
from wisp.models import catalog
from wisp.testing import ScriptedModel, reply

JSON = dict[str, Any]
HIGH = {"input_tokens": 900, "output_tokens": 100}


def user(text: str) -> JSON:
    return {"role": "user", "content": text}


def assistant(text: str) -> JSON:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


TOOL_USE: JSON = {"role": "assistant", "content": [
    {"type": "tool_use", "id": "toolu_9", "name": "Echo", "input": {}}]}
TOOL_RESULT: JSON = {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}]}


def test_context_tokens_counts_input_cache_and_output() -> None:
    usage = {"input_tokens": 1, "cache_read_input_tokens": 20,
             "cache_creation_input_tokens": 300, "output_tokens": 4000, "other": 9}
    assert context_tokens(usage) == 4321
    assert context_tokens({"input_tokens": None}) == 0


def test_threshold_from_env_or_the_model_window() -> None:
    window = catalog.context_window(MODEL)
    assert threshold_tokens(MODEL, {}) == window * DEFAULT_PERCENT // 100
    assert threshold_tokens(MODEL, {"WISP_AUTOCOMPACT_PCT": "50"}) == window // 2
    assert threshold_tokens(MODEL, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "10"}) == window // 10
    assert threshold_tokens(MODEL, {"WISP_AUTOCOMPACT_TOKENS": "1234",
                                    "WISP_AUTOCOMPACT_PCT": "50"}) == 1234
    assert threshold_tokens(MODEL, {"WISP_AUTOCOMPACT_TOKENS": "lots"}) == (
        window * DEFAULT_PERCENT // 100)


def test_split_tail_keeps_the_last_prompt_or_the_last_tool_exchange() -> None:
    assert split_tail([]) == ([], [])
    history = [user("a"), assistant("b"), user("c")]
    assert split_tail(history) == (history[:2], history[2:])
    history = [user("a"), assistant("b"), user("c"), TOOL_USE, TOOL_RESULT]
    assert split_tail(history) == (history[:3], history[3:])
    # A lone tool_result at the start can't take its tool_use along: nothing before it.
    assert split_tail([TOOL_RESULT]) == ([], [TOOL_RESULT])


def compact_ctx(model: ScriptedModel, cwd: Path, history: list[JSON], **kw: Any) -> Any:
    kw.setdefault("env", {"WISP_AUTOCOMPACT_TOKENS": "1000"})  # the session's, not os.environ
    ctx, _, sink = build_ctx(model, cwd, **kw)
    ctx.session.history[:] = history
    return ctx, sink


def test_the_threshold_comes_from_the_session_env_not_the_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WISP_AUTOCOMPACT_TOKENS", "1000")
    model = ScriptedModel(reply.text("S"))
    ctx, _ = compact_ctx(model, tmp_path, [user("a"), assistant("b"), user("c")], env={})
    assert not run_async(maybe_compact(ctx, HIGH))
    assert model.requests == []


def test_below_the_threshold_nothing_happens(tmp_path: Path) -> None:
    model = ScriptedModel()
    ctx, _ = compact_ctx(model, tmp_path, [user("a"), assistant("b"), user("c")])
    assert not run_async(maybe_compact(ctx, {"input_tokens": 999}))
    assert not run_async(maybe_compact(ctx, None))
    assert model.requests == []


def test_compaction_replaces_the_head_with_a_summary(tmp_path: Path) -> None:
    model = ScriptedModel(reply.text("  the summary  ", usage={"output_tokens": 7}))
    history = [user("a"), assistant("b"), user("c"), TOOL_USE, TOOL_RESULT]
    ctx, sink = compact_ctx(model, tmp_path, list(history))
    assert run_async(maybe_compact(ctx, HIGH))
    # The summary request: the head, then the summary instruction; no tail.
    sent = model.requests[0].body["messages"]
    assert sent[:2] == history[:2]
    assert sent[2]["content"] == [{"type": "text", "text": "c"},
                                  {"type": "text", "text": SUMMARY_REQUEST}]
    assert model.requests[0].body["max_tokens"] == 8192
    assert ctx.session.history == [user(SUMMARY_PREFIX + "the summary"), TOOL_USE, TOOL_RESULT]
    boundary = [f for f in sink.items if f.get("subtype") == "compact_boundary"]
    metadata = boundary[0]["compact_metadata"]
    assert {k: metadata[k] for k in ("trigger", "pre_tokens")} == {
        "trigger": "auto", "pre_tokens": 1000}
    assert isinstance(metadata["duration_ms"], int)
    # The reference's frames around it: compacting, then its result, then the boundary
    # and the summary as a synthetic user message.
    kinds = [(f["type"], f.get("subtype"), f.get("status"), f.get("compact_result"))
             for f in sink.items]
    assert kinds == [("system", "status", "compacting", None),
                     ("system", "status", None, "success"),
                     ("system", "compact_boundary", None, None), ("user", None, None, None)]
    assert sink.items[-1]["isSynthetic"] is True
    assert sink.items[-1]["message"]["content"] == SUMMARY_PREFIX + "the summary"
    assert ctx.session.usage.totals()["output_tokens"] == 7  # the summary call is billed


def test_a_tail_prompt_is_merged_after_the_summary(tmp_path: Path) -> None:
    model = ScriptedModel(reply.text("S"))
    ctx, _ = compact_ctx(model, tmp_path, [user("a"), assistant("b"), user("c")])
    assert run_async(maybe_compact(ctx, HIGH))
    assert ctx.session.history == [{"role": "user", "content": [
        {"type": "text", "text": SUMMARY_PREFIX + "S"}, {"type": "text", "text": "c"}]}]


def test_too_short_a_head_is_not_compacted(tmp_path: Path) -> None:
    model = ScriptedModel()
    ctx, _ = compact_ctx(model, tmp_path, [assistant("b"), user("c")])
    assert not run_async(maybe_compact(ctx, HIGH))
    assert model.requests == []


def test_a_failed_summary_keeps_the_history(tmp_path: Path) -> None:
    model = ScriptedModel(reply.error(400, "nope"), reply.text("   "))
    history = [user("a"), assistant("b"), user("c")]
    ctx, sink = compact_ctx(model, tmp_path, list(history))
    assert not run_async(maybe_compact(ctx, HIGH))
    assert [f["error"] for f in sink.items if f.get("subtype") == "compact_failed"] == ["nope"]
    assert not run_async(maybe_compact(ctx, HIGH))  # a blank summary is no summary
    assert ctx.session.history == history


def test_precompact_hooks_can_veto_or_add_instructions(tmp_path: Path) -> None:
    history = [user("a"), assistant("b"), user("c")]
    model = ScriptedModel()
    ctx, _ = compact_ctx(model, tmp_path, list(history),
                         hooks={"PreCompact": lambda _: {"decision": "block", "reason": "no"}})
    assert not run_async(maybe_compact(ctx, HIGH))
    assert model.requests == []

    model = ScriptedModel(reply.text("S"))
    ctx, _ = compact_ctx(model, tmp_path, list(history), hooks={"PreCompact": lambda _: {
        "hookSpecificOutput": {"hookEventName": "PreCompact",
                               "additionalContext": "keep the numbers"}}})
    assert run_async(maybe_compact(ctx, HIGH))
    last = model.requests[0].body["messages"][-1]
    assert last == user(SUMMARY_REQUEST + "\n\nkeep the numbers")


def test_the_loop_compacts_before_the_call_after_a_large_one(tmp_path: Path) -> None:
    model = ScriptedModel(
        reply.tool_use("Echo", {"n": 1}),
        reply.tool_use("Echo", {"n": 2}, usage={"input_tokens": 5000}),
        reply.text("the summary"),
        reply.text("done"),
    )
    run = run_loop(model, "first", cwd=tmp_path, tools=[echo_tool()],
                   env={"WISP_AUTOCOMPACT_TOKENS": "1000"})
    assert run.text == "done"
    bodies = [r.body["messages"] for r in model.requests]
    assert len(bodies) == 4
    assert bodies[2][-1]["content"][-1] == {"type": "text", "text": SUMMARY_REQUEST}
    # The call after the summary starts from it, with the last tool exchange verbatim.
    assert bodies[3][0]["content"] == SUMMARY_PREFIX + "the summary"
    assert [m["role"] for m in bodies[3]] == ["user", "assistant", "user"]
    assert bodies[3][1]["content"][0]["input"] == {"n": 2}
    assert bodies[3][2]["content"][0]["type"] == "tool_result"
    assert len(run.system("compact_boundary")) == 1
