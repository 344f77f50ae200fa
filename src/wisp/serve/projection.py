"""From the engine's events to a session's Managed Agents events, and the model
conversation into the store.

One model request is one transaction: its `agent.thinking`, `agent.message`,
`agent.tool_use` / `agent.custom_tool_use` events and `span.model_request_end` are written
together with the assistant message in the session's conversation, when the message is
complete. A crash mid-request therefore leaves a `span.model_request_start` without its
end and nothing else: recovery sends the request again, and no agent event is logged
twice. While the request streams, followers that asked for previews get
`event_start` / `event_delta` (never stored).

`agent.tool_result` (a tool run here) is written as soon as the tool returns, so a crash
after it never runs the tool again.
"""

from __future__ import annotations

from collections.abc import Callable

from wisp.engine.events import (
    ApiRetry,
    BlockShown,
    Event,
    Refused,
    StreamDelta,
    ToolResultReady,
)
from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.session_log import SessionLog, event_id, public, tool_event_id

# How a tool call of this session is run: "cloud" (here), "client" (a self-hosted
# toolset call), "custom"; and whether the agent config asks before it runs.
ToolRoute = Callable[[str], tuple[str, str]]
# An MCP tool's model name → (server, tool); what `agent.mcp_tool_use` names.
McpCall = Callable[[str], "tuple[str, str] | None"]
_ZERO_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 0}


class SessionProjection:
    """The runtime's `EventSink` and the session's `TranscriptRecorder` in one."""

    def __init__(self, log: SessionLog, route: ToolRoute, conversation_length: int,
                 mcp_call: McpCall | None = None) -> None:
        self.log = log
        self.route = route
        self.mcp_call = mcp_call or (lambda name: None)
        self.length = conversation_length  # messages already stored
        self.pending: list[shapes.ServerEvent] = []  # this request's agent events, not yet written
        self.request_start: str | None = None
        self.previewing: str | None = None  # the event id a preview is building
        self.tool_names: dict[str, str] = {}  # model tool_use id → tool name
        # The `user.message` whose content the next user message is: logged as consumed
        # in the transaction that adds it to the conversation, so a crash leaves it either
        # queued (taken up again) or answered-in-progress, never lost in between.
        self.consume_with_next_user: shapes.ClientEventRecord | None = None
        self.usages: list[JSON] = []  # each finished request's usage, until accounted
        self.refused = False  # the run ended on the model's refusal (`wisp.serve.ending`)
        # The session's status through a model request's retries: `rescheduling` while
        # it waits to send it again, `running` once it does (the driver's `set_status`).
        self.on_status: Callable[[str], None] | None = None
        self.rescheduled = False

    # EventSink --------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        if isinstance(event, StreamDelta):
            self._stream(event.event)
        elif isinstance(event, BlockShown):
            self._blocks(event)
        elif isinstance(event, ToolResultReady):
            self._tool_result(event)
        elif isinstance(event, ApiRetry):
            self._retry(event)
        elif isinstance(event, Refused) and event.step == "final":
            self.refused = True

    def _retry(self, retry: ApiRetry) -> None:
        """A failed model request the engine sends again: its span ends in error, and
        `session.error` (retrying) says why."""
        self.failed_request()
        kind = error_kind(retry.status)
        message = f"{retry.message} (attempt {retry.attempt} of {retry.max_retries})"
        self.log.emit(shapes.session_error(kind, message, retry_status="retrying"))
        if self.on_status is not None:
            self.rescheduled = True
            self.on_status("rescheduling")

    def _stream(self, raw: JSON) -> None:
        kind = raw.get("type")
        if kind == "message_start":
            self._start_request()
        elif kind == "content_block_start" and self.log.fanout.has_previews(
                self.log.session_id):
            self._preview_start(raw.get("content_block") or {})
        elif kind == "content_block_delta" and self.previewing is not None:
            delta = raw.get("delta") or {}
            if delta.get("type") == "text_delta":
                self.log.preview(shapes.event_delta(self.previewing, delta.get("text", "")))

    def _start_request(self) -> None:
        if self.request_start is not None:  # a retry of the same request: a new span
            self._end_request(_ZERO_USAGE, is_error=True)
        if self.rescheduled and self.on_status is not None:
            self.rescheduled = False
            self.on_status("running")
        [start] = self.log.emit(shapes.model_request_start())
        self.request_start = start["id"]

    def _preview_start(self, block: JSON) -> None:
        kinds = {"text": "agent.message", "thinking": "agent.thinking"}
        kind = kinds.get(str(block.get("type")))
        if kind is None:
            self.previewing = None
            return
        self.previewing = event_id()
        self.log.preview(shapes.event_start(self.previewing, kind))

    def _blocks(self, shown: BlockShown) -> None:
        for block in shown.blocks:
            agent_event = self._agent_event(block)
            if agent_event is not None:
                if self.previewing is not None and block.get("type") in ("text", "thinking"):
                    agent_event["id"] = self.previewing  # the preview's event, complete
                    self.previewing = None
                self.pending.append(agent_event)

    def _agent_event(self, block: JSON) -> shapes.ServerEvent | None:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            return shapes.agent_message(str(block["text"]))
        if kind == "thinking":
            return shapes.agent_thinking()
        if kind == "tool_use":
            return self._tool_use(block)
        return None

    def _tool_use(self, block: JSON) -> shapes.ServerEvent:
        self.tool_names[str(block.get("id"))] = str(block.get("name"))
        where, permission = self.route(str(block.get("name")))
        name, tool_input = str(block.get("name")), block.get("input") or {}
        policy = "always_ask" if permission == "ask" else "always_allow"
        mcp = self.mcp_call(name) if where == "mcp" else None
        event = (shapes.agent_mcp_tool_use(*mcp, tool_input, policy=policy) if mcp else
                 shapes.agent_custom_tool_use(name, tool_input) if where == "custom" else
                 shapes.agent_tool_use(name, tool_input, policy=policy))
        event["id"] = tool_event_id(str(block.get("id")))
        return event

    def _tool_result(self, ready: ToolResultReady) -> None:
        block = ready.block
        tool_use_id = str(block.get("tool_use_id"))
        name = self.tool_names.get(tool_use_id)
        where = "cloud" if name is None else self.route(name)[0]
        if where not in ("cloud", "mcp"):
            return  # the client's own result event is the record
        content = block.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}] if content else []
        result = (shapes.agent_mcp_tool_result if where == "mcp"
                  else shapes.agent_tool_result)
        self.log.emit(result(tool_event_id(tool_use_id), content or [],
                             is_error=bool(block.get("is_error"))))

    # TranscriptRecorder -----------------------------------------------------------------

    def user(self, content: str | list[JSON], uuid: str | None = None) -> str:
        message = {"role": "user", "content": content}
        consumed, self.consume_with_next_user = self.consume_with_next_user, None
        entries = ([shapes.processed(public(shapes.log_entry(consumed)))]
                   if consumed is not None else [])
        self.log.write(entries, conversation=(self.length, [message]))
        self.length += 1
        return uuid or ""

    def assistant(self, message: JSON, request_id: str | None = None,
                  block_uuids: list[str] | None = None) -> list[str]:
        stored = {"role": "assistant", "content": message.get("content") or []}
        events = self.pending
        self.pending = []
        usage = message.get("usage") or {}
        self.usages.append(usage)
        self.log.emit(*events, *self._end_events(usage, False),
                      conversation=(self.length, [stored]))
        self.length += 1
        return list(block_uuids or [])

    def branch_at(self, uuid: str | None) -> None:
        """A served session's log is append-only: nothing in it rewinds."""

    def compacted(self, trigger: str, pre_tokens: int, summary: str,
                  duration_ms: int | None = None) -> str:
        """The conversation starts again from the summary."""
        message = {"role": "user", "content": summary}
        self.log.write([], conversation=(0, [message]))
        self.length = 1
        return ""

    # Ending requests --------------------------------------------------------------------

    def _end_events(self, usage: JSON, is_error: bool) -> list[shapes.ServerEvent]:
        if self.request_start is None:
            return []
        start, self.request_start = self.request_start, None
        return [shapes.model_request_end(start, usage, is_error=is_error)]

    def _end_request(self, usage: JSON, *, is_error: bool) -> None:
        """A request that ends without a message (an error, an interrupt)."""
        self.pending = []
        events = self._end_events(usage, is_error)
        if events:
            self.log.emit(*events)

    def request_failed(self) -> None:
        self._end_request(_ZERO_USAGE, is_error=True)

    def failed_request(self) -> None:
        """A model request that failed: its span, opened now if the failure came before
        any of its stream did, ends in error."""
        if self.request_start is None:
            [start] = self.log.emit(shapes.model_request_start())
            self.request_start = start["id"]
        self._end_request(_ZERO_USAGE, is_error=True)


def error_kind(status: int | None) -> str:
    """The `session.error` type of a failed model request's HTTP status."""
    return ("model_overloaded_error" if status == 529
            else "model_rate_limited_error" if status == 429
            else "model_request_failed_error")
