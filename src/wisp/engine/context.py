"""RunContext: what one run of the loop needs besides the Session (dependencies + config)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.usage import UsageLedger
from wisp.hooks.runner import HookRunner
from wisp.models.base import Model
from wisp.tools.base import Tool
from wisp.wire import frames
from wisp.wire.writer import FrameSink

if TYPE_CHECKING:
    from wisp.engine.subagents import SubagentRunner

JSON = dict[str, Any]


@dataclass
class EngineConfig:
    """Per-process engine configuration (derived from Options and initialize)."""

    tools: dict[str, Tool]
    system_blocks: list[JSON]
    disabled_tools: frozenset[str] = frozenset()
    max_turns: int | None = None
    max_budget_usd: float | None = None
    fallback_model: str | None = None
    include_partial_messages: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_tokens: int | None = None
    thinking: JSON | None = None
    json_schema: JSON | None = None
    api_key_source: str = "none"
    extra_tool_definitions: list[JSON] = field(default_factory=list)
    tool_filter: frozenset[str] | None = None  # --tools: None means every built-in

    def tools_selected(self, name: str) -> bool:
        return self.tool_filter is None or name in self.tool_filter


@dataclass
class RunContext:
    session: Session
    config: EngineConfig
    model: Model
    sink: FrameSink
    parent_tool_use_id: str | None = None
    run_usage: UsageLedger = field(default_factory=UsageLedger)
    hooks: HookRunner | None = None
    # Runs the Task tool's subagents; None inside a subagent (no nesting).
    subagents: SubagentRunner | None = None

    def emit(self, frame: JSON) -> None:
        self.sink.write(frame)

    def emit_system(self, subtype: str, **fields: Any) -> None:
        self.emit(frames.system(subtype, self.session.session_id, **fields))
