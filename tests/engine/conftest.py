"""In-process engine tests: the loop runs against `wisp.testing.ScriptedModel`, no processes.

Every loop test goes through `run_loop`, and reads the run through `LoopRun`'s accessors
(`terminal_reason`, `text`, `num_turns`, `system(...)`, ...), never through the loop's own
return value or frame shapes. When `AgentLoop.run` changes (an `Outcome` returned, typed
events through a sink), this file is the one place to adapt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from wisp.engine.context import EngineConfig, RunContext
from wisp.engine.events import Event
from wisp.engine.loop import AgentLoop
from wisp.engine.outcome import Outcome
from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.tool_calls import ToolRunState
from wisp.hooks.model import CallbackHook, HookMatcher
from wisp.hooks.runner import HookRunner
from wisp.models.base import Model
from wisp.permissions.engine import PermissionPolicy
from wisp.processes import ProcessRegistry
from wisp.tools.base import Tool, ToolContext, ToolResult
from wisp.wire.projection import StreamJson

JSON = dict[str, Any]
T = TypeVar("T")
MODEL = "claude-sonnet-5-5"  # priced in the catalog, so budgets can be tested
HookFn = Callable[[JSON], JSON | Awaitable[JSON]]


def run_async(coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
    """Runs a coroutine on a fresh loop, bounded (a hang fails fast, not at pytest-timeout)."""
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


class Collect:
    """An EventSink that keeps everything the engine emits: the events, and the frames the
    stream-json projection makes of them (`items`)."""

    def __init__(self) -> None:
        self.items: list[JSON] = []
        self.events: list[Event] = []
        self._frames = StreamJson(self, "test-session")

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self._frames.emit(event)

    def write(self, frame: JSON) -> None:
        self.items.append(frame)


@dataclass
class LoopRun:
    """What one prompt's run left behind, read through accessors that don't depend on the
    loop's return type."""

    result: JSON  # the `result` frame the stream-json projection made of RunFinished
    emitted: list[JSON]
    ctx: RunContext
    model: Model
    hook_calls: list[tuple[str, JSON]] = field(default_factory=list)
    outcome: Outcome | None = None  # what AgentLoop.run returned
    events: list[Event] = field(default_factory=list)  # what the engine emitted, typed

    @property
    def terminal_reason(self) -> str:
        return str(self.result["terminal_reason"])

    @property
    def is_error(self) -> bool:
        return bool(self.result["is_error"])

    @property
    def text(self) -> str | None:
        return self.result.get("result")

    @property
    def num_turns(self) -> int:
        return int(self.result["num_turns"])

    @property
    def stop_reason(self) -> str | None:
        return self.result.get("stop_reason")

    @property
    def errors(self) -> list[str]:
        return list(self.result.get("errors") or [])

    @property
    def api_error_status(self) -> int | None:
        return self.result.get("api_error_status")

    @property
    def cost_usd(self) -> float:
        return float(self.result["total_cost_usd"])

    @property
    def history(self) -> list[JSON]:
        return self.ctx.session.history

    def system(self, subtype: str) -> list[JSON]:
        return [e for e in self.emitted
                if e.get("type") == "system" and e.get("subtype") == subtype]

    def assistant_blocks(self) -> list[JSON]:
        """Every content block shown to the client, in order (aborted partials included)."""
        return [b for e in self.emitted if e.get("type") == "assistant"
                for b in e["message"]["content"]]

    def tool_results(self) -> list[JSON]:
        return [b for e in self.emitted if e.get("type") == "user"
                for b in e["message"]["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"]


class FnTool(Tool):
    """A tool whose `run` is a Python function: `FnTool("Echo", fn)`, kind "read" (allowed
    without a prompt in default mode)."""

    description: ClassVar[str] = "a test tool"
    input_schema: ClassVar[JSON] = {"type": "object", "properties": {}}

    def __init__(self, name: str, fn: Callable[[JSON], Awaitable[ToolResult] | ToolResult],
                 kind: str = "read") -> None:
        self.name = name  # type: ignore[misc]
        self.kind = kind  # type: ignore[assignment]
        self.fn = fn
        self.calls: list[JSON] = []

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        self.calls.append(tool_input)
        out = self.fn(tool_input)
        if isinstance(out, ToolResult):
            return out
        return await out


def echo_tool(name: str = "Echo") -> FnTool:
    return FnTool(name, lambda tool_input: ToolResult(f"echo: {tool_input}"))


def build_ctx(model: Model, cwd: Path, *, tools: list[Tool] | None = None,
              hooks: dict[str, HookFn] | None = None,
              hook_calls: list[tuple[str, JSON]] | None = None,
              mode: str = "default", **config: Any) -> tuple[RunContext, ToolRunState, Collect]:
    """A RunContext as `wisp.launch.setup.build_run` makes one, minus settings and processes:
    `hooks` maps an event name to a Python function playing an SDK hook callback."""
    sink = Collect()
    config.setdefault("retry", RetryPolicy(max_retries=3, base_delay_s=0.001))
    engine = EngineConfig(tools={t.name: t for t in tools or []}, system_blocks=[], **config)
    policy = PermissionPolicy(mode=mode, cwd=cwd, env={"HOME": str(cwd / "home")})
    session = Session(cwd=cwd, model=MODEL, policy=policy, processes=ProcessRegistry())
    ctx = RunContext(session=session, config=engine, model=model, sink=sink)
    if hooks:
        calls = hook_calls if hook_calls is not None else []

        async def callback(callback_id: str, payload: JSON, tool_use_id: str | None,
                           timeout: float | None) -> JSON:
            calls.append((callback_id, payload))
            answer = hooks[callback_id](payload)
            return await answer if asyncio.iscoroutine(answer) else answer  # type: ignore[return-value]

        matchers = [HookMatcher(event, None, (CallbackHook(event),)) for event in hooks]
        ctx.hooks = HookRunner(matchers, cwd=str(cwd), callback=callback)
    return ctx, ToolRunState(policy=policy), sink


async def run_prompt(ctx: RunContext, tool_state: ToolRunState, sink: Collect,
                     prompt: str | list[JSON], hook_calls: list[tuple[str, JSON]] | None = None
                     ) -> LoopRun:
    """One prompt through the loop (async: for tests that interrupt or run several)."""
    first_event = len(sink.events)
    outcome = await AgentLoop(ctx, tool_state).run(prompt)
    result = sink.items[-1]  # the projection's `result` frame for the RunFinished event
    return LoopRun(result, list(sink.items[:-1]), ctx, ctx.model, hook_calls or [], outcome,
                   sink.events[first_event:])


def run_loop(model: Model, prompt: str | list[JSON] = "hi", *, cwd: Path,
             tools: list[Tool] | None = None, hooks: dict[str, HookFn] | None = None,
             **config: Any) -> LoopRun:
    """Runs one prompt to its end against `model`; `config` goes to EngineConfig."""
    calls: list[tuple[str, JSON]] = []
    ctx, state, sink = build_ctx(model, cwd, tools=tools, hooks=hooks, hook_calls=calls,
                                 **config)
    return run_async(run_prompt(ctx, state, sink, prompt, calls))


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    return tmp_path
