"""RunContext: what one run of the loop needs besides the Session (dependencies + config)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.engine.events import Event, EventSink
from wisp.engine.retry import RetryPolicy
from wisp.engine.session import Session
from wisp.engine.usage import UsageLedger
from wisp.hooks.runner import HookRunner
from wisp.jsontypes import JSON
from wisp.models.base import Model
from wisp.models.shape import Thinking
from wisp.tools.base import Tool
from wisp.values import Record, field

if TYPE_CHECKING:
    from wisp.engine.subagents import SubagentRunner
    from wisp.engine.tasks import TaskRegistry
    from wisp.sandbox.runner import CommandSandbox
    from wisp.sessions.checkpoints import FileHistory
    from wisp.tools.editor_files import EditorFiles, EditorTerminals



class EngineConfig(Record):
    """Per-session engine configuration (built by `wisp.runtime`, changed by controls)."""

    tools: dict[str, Tool]
    system_blocks: list[JSON]
    # Text blocks the first user message of every request starts with (the memory files):
    # added when a request is built, never stored in the history or the transcript.
    context_blocks: list[JSON] = field(default_factory=list)
    disabled_tools: frozenset[str] = frozenset()
    max_turns: int | None = None
    max_budget_usd: float | None = None
    fallback_model: str | None = None
    include_partial_messages: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_tokens: int | None = None
    # --thinking, --max-thinking-tokens, --thinking-display, --effort: how each request
    # asks for thinking and effort (`wisp.models.shape`), with the --betas given.
    thinking: Thinking = field(default_factory=Thinking)
    betas: tuple[str, ...] = ()
    device_id: str = ""  # metadata.user_id's device (`wisp.models.identity`)
    json_schema: JSON | None = None
    api_key_source: str = "none"
    extra_tool_definitions: list[JSON] = field(default_factory=list)
    tool_filter: frozenset[str] | None = None  # --tools: None means every built-in
    # The session's environment overlay: what its tools, hooks and knobs (compaction
    # threshold, structured-output retries) read. Never os.environ directly.
    env: Mapping[str, str] = field(default_factory=dict)
    # File checkpoints for rewind_files (None: off). On the config rather than the session
    # so that subagents, whose config is a copy of this one, write through the same store.
    checkpoints: FileHistory | None = None
    # The session's OS sandbox (None: off). On the config so subagents share it too.
    sandbox: CommandSandbox | None = None
    # An editor's view of the files (`wisp acp`), which the file tools go through; None:
    # the disk. On the config so subagents edit through the same editor.
    editor_files: EditorFiles | None = None
    editor_terminals: EditorTerminals | None = None

    def tools_selected(self, name: str) -> bool:
        return self.tool_filter is None or name in self.tool_filter


class RunContext(Record):
    session: Session
    config: EngineConfig
    model: Model
    sink: EventSink
    # The Task call this run serves (a subagent), or None for the main thread.
    parent_tool_use_id: str | None = None
    run_usage: UsageLedger = field(default_factory=UsageLedger)
    hooks: HookRunner | None = None
    # Runs the Task tool's subagents; None inside a subagent (no nesting).
    subagents: SubagentRunner | None = None
    # The session's tasks (subagents, background commands), shared with its subagents.
    tasks: TaskRegistry | None = None
    # Inside a subagent: its task id, agent type and transcript, which its hooks are told.
    agent_id: str | None = None
    agent_type: str | None = None
    agent_transcript_path: str | None = None
    # A hook said `continue: false` during this run: its stopReason ("" when it gave none).
    # The loop ends the run once the step in progress is done.
    hook_stop: str | None = None

    def emit(self, event: Event) -> None:
        self.sink.emit(event)
