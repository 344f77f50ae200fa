"""The server events as types: one `TypedDict` per event type the server writes to a
session's log, each with a `Literal` tag, and their union `ServerEvent` (the house style of
`wisp.wire.protocol`).

Field names and literal values follow the official `anthropic` SDK's models
(`anthropic.types.beta.sessions.BetaManagedAgents*Event`); the SDK is the spec, never
imported. Each builder (`server_events`, `outcomes`, `multiagent`) returns its type, and
tests/serve/test_event_types.py checks every builder's keys against its type's declared
keys, so the JSON on the wire and these declarations cannot drift apart. Content blocks,
usage and budget documents stay `JSON`: they are typed where they are read.
"""
# No `from __future__ import annotations`: the TypedDicts' `__required_keys__` and
# `__optional_keys__` must see `NotRequired` at runtime (the tests read them).

from typing import Literal, NotRequired, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.client_events import ClientEventRecord

Permission = Literal["allow", "ask", "deny"]
RetryStatus = Literal["retrying", "exhausted", "terminal"]


class _Event(TypedDict):
    """What every server event carries: its id (`sevt_…`) and when it was written."""

    id: str
    processed_at: str


# Tool evaluation (`BetaManagedAgentsAgentToolEvaluation`) ---------------------------------


class AutoVerdict(TypedDict):
    type: Permission
    reason_code: NotRequired[str]  # absent on `allow`


class AutoEvaluation(TypedDict):
    type: Literal["auto"]
    evaluated_permission: AutoVerdict


class PolicyEvaluation(TypedDict):
    type: Literal["always_allow", "always_ask"]


ToolEvaluation = AutoEvaluation | PolicyEvaluation


# Agent events ---------------------------------------------------------------------------


class AgentMessageEvent(_Event):
    type: Literal["agent.message"]
    content: list[JSON]


class AgentThinkingEvent(_Event):
    type: Literal["agent.thinking"]


class AgentToolUseEvent(_Event):
    type: Literal["agent.tool_use"]
    name: str
    input: JSON
    evaluated_permission: Permission
    evaluation: NotRequired[ToolEvaluation]  # absent: refused before any policy applied


class AgentToolResultEvent(_Event):
    type: Literal["agent.tool_result"]
    tool_use_id: str
    content: list[JSON]
    is_error: bool


class AgentCustomToolUseEvent(_Event):
    type: Literal["agent.custom_tool_use"]
    name: str
    input: JSON


class AgentMcpToolUseEvent(_Event):
    type: Literal["agent.mcp_tool_use"]
    mcp_server_name: str
    name: str
    input: JSON
    evaluated_permission: Permission
    evaluation: NotRequired[ToolEvaluation]


class AgentMcpToolResultEvent(_Event):
    type: Literal["agent.mcp_tool_result"]
    mcp_tool_use_id: str
    content: list[JSON]
    is_error: bool


class AgentThreadContextCompactedEvent(_Event):
    type: Literal["agent.thread_context_compacted"]


class AgentThreadMessageSentEvent(_Event):
    type: Literal["agent.thread_message_sent"]
    to_session_thread_id: str
    to_agent_name: str
    content: list[JSON]


class AgentThreadMessageReceivedEvent(_Event):
    type: Literal["agent.thread_message_received"]
    from_session_thread_id: str
    from_agent_name: str | None  # None: the coordinator (the message came down)
    content: list[JSON]


# Session status -------------------------------------------------------------------------


class EndTurn(TypedDict):
    type: Literal["end_turn"]


class RequiresAction(TypedDict):
    type: Literal["requires_action"]
    event_ids: list[str]


class RetriesExhausted(TypedDict):
    type: Literal["retries_exhausted"]


class BudgetReached(TypedDict):
    type: Literal["budget_reached"]


class Refusal(TypedDict):
    type: Literal["refusal"]


StopReason = EndTurn | RequiresAction | RetriesExhausted | BudgetReached | Refusal
StopReasonType = Literal["end_turn", "requires_action", "retries_exhausted",
                         "budget_reached", "refusal"]


class SessionStatusRunningEvent(_Event):
    type: Literal["session.status_running"]


class SessionStatusIdleEvent(_Event):
    type: Literal["session.status_idle"]
    stop_reason: StopReason
    stop_details: NotRequired[JSON]  # what a `refusal` says


class SessionStatusRescheduledEvent(_Event):
    type: Literal["session.status_rescheduled"]


class SessionStatusTerminatedEvent(_Event):
    type: Literal["session.status_terminated"]


class SessionDeletedEvent(_Event):
    type: Literal["session.deleted"]


class SessionUpdatedEvent(_Event):
    """Only the fields that changed are present (a removed budget is `budget: null`)."""

    type: Literal["session.updated"]
    agent: NotRequired[JSON]
    budget: NotRequired[JSON | None]
    metadata: NotRequired[JSON]
    title: NotRequired[str | None]


class RetryStatusObject(TypedDict):
    type: RetryStatus


class SessionErrorObject(TypedDict):
    type: str  # one of server_events.SESSION_ERROR_TYPES
    message: str
    retry_status: RetryStatusObject
    mcp_server_name: NotRequired[str]  # the mcp_* errors
    repository_url: NotRequired[str | None]  # the repository_* errors


class SessionErrorEvent(_Event):
    type: Literal["session.error"]
    error: SessionErrorObject


class SessionUsageEvent(_Event):
    type: Literal["session.usage"]
    usage: JSON
    budget: JSON | None


# Threads --------------------------------------------------------------------------------


class _ThreadEvent(_Event):
    session_thread_id: str
    agent_name: str


class SessionThreadCreatedEvent(_ThreadEvent):
    type: Literal["session.thread_created"]


class SessionThreadStatusRunningEvent(_ThreadEvent):
    type: Literal["session.thread_status_running"]


class SessionThreadStatusIdleEvent(_ThreadEvent):
    type: Literal["session.thread_status_idle"]
    stop_reason: EndTurn


# Spans ----------------------------------------------------------------------------------


class ModelUsage(TypedDict):
    """`BetaManagedAgentsSpanModelUsage`."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    speed: NotRequired[Literal["standard", "fast"]]


class SpanModelRequestStartEvent(_Event):
    type: Literal["span.model_request_start"]


class SpanModelRequestEndEvent(_Event):
    type: Literal["span.model_request_end"]
    model_request_start_id: str
    model_usage: ModelUsage
    is_error: bool


class SpanOutcomeEvaluationStartEvent(_Event):
    type: Literal["span.outcome_evaluation_start"]
    outcome_id: str
    iteration: int


class SpanOutcomeEvaluationOngoingEvent(_Event):
    type: Literal["span.outcome_evaluation_ongoing"]
    outcome_id: str
    iteration: int


class SpanOutcomeEvaluationEndEvent(_Event):
    type: Literal["span.outcome_evaluation_end"]
    outcome_evaluation_start_id: str
    outcome_id: str
    iteration: int
    result: str  # one of outcomes.RESULTS
    explanation: str
    usage: ModelUsage


ServerEvent = (
    AgentMessageEvent | AgentThinkingEvent | AgentToolUseEvent | AgentToolResultEvent
    | AgentCustomToolUseEvent | AgentMcpToolUseEvent | AgentMcpToolResultEvent
    | AgentThreadContextCompactedEvent | AgentThreadMessageSentEvent
    | AgentThreadMessageReceivedEvent
    | SessionStatusRunningEvent | SessionStatusIdleEvent | SessionStatusRescheduledEvent
    | SessionStatusTerminatedEvent | SessionDeletedEvent | SessionUpdatedEvent
    | SessionErrorEvent | SessionUsageEvent
    | SessionThreadCreatedEvent | SessionThreadStatusRunningEvent
    | SessionThreadStatusIdleEvent
    | SpanModelRequestStartEvent | SpanModelRequestEndEvent
    | SpanOutcomeEvaluationStartEvent | SpanOutcomeEvaluationOngoingEvent
    | SpanOutcomeEvaluationEndEvent
)


# Previews (`event_deltas` streams only; never in the log) -------------------------------


PreviewedKind = Literal["agent.message", "agent.thinking"]


class PreviewedEvent(TypedDict):
    id: str
    type: PreviewedKind


class EventStartPreview(TypedDict):
    type: Literal["event_start"]
    event: PreviewedEvent


class TextFragment(TypedDict):
    type: Literal["text"]
    text: str


class ContentDelta(TypedDict):
    type: Literal["content_delta"]
    content: TextFragment
    index: NotRequired[int]


class EventDeltaPreview(TypedDict):
    type: Literal["event_delta"]
    event_id: str
    delta: ContentDelta


Preview = EventStartPreview | EventDeltaPreview


def log_entry(event: ServerEvent | ClientEventRecord) -> JSON:
    """A typed event as the store and the stream take it: the same dict, seen as JSON
    (every TypedDict here is a JSON object, and the store needs no more than that)."""
    return cast(JSON, event)
