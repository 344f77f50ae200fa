"""The documents the Managed Agents API returns, one `TypedDict` per resource, tagged by a
`Literal` `type` as the official `anthropic` SDK's models are (`BetaManagedAgentsAgent`,
`BetaManagedAgentsSession`, `BetaEnvironment`, ...: the SDK is the spec, never imported).

Each builder (`agent_document`, `session_document`, ...) returns its type, and
`tests/serve/test_document_types.py` checks that every builder writes exactly the keys its
type declares. Nested objects the server passes through as the client sent them (tools,
MCP servers, configs, metadata values) stay `JSON`: they are checked where they are read.

A document that comes back from the store is what a builder wrote there; `as_agent`,
`as_session`, ... say so, each in one place (a `cast`: the store holds JSON), so no other
module casts a document.

No `from __future__ import annotations` here: Python 3.11 reads `NotRequired` from real
annotations only, and `__required_keys__` must be right for the test that checks them."""

import copy
from collections.abc import Mapping
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar, cast

from wisp.jsontypes import JSON

Metadata = dict[str, str]
SessionStatus = Literal["rescheduling", "running", "idle", "terminated"]


# Agents -----------------------------------------------------------------------------------

class Effort(TypedDict):
    type: str  # one of EFFORTS


class ModelConfig(TypedDict):
    """BetaManagedAgentsModelConfig; `effort` is None only in an update's patch."""

    id: str
    effort: Effort | None
    speed: Literal["standard", "fast"]
    inference_geo: str | None


class AgentFields(TypedDict):
    """What `agent_create` returns: the agent document's own fields (the agent document
    inherits them, so a field added here is in both)."""

    name: str
    model: ModelConfig
    description: str | None
    system: str | None
    metadata: Metadata
    tools: list[JSON]
    mcp_servers: list[JSON]
    skills: list[JSON]
    execution_identity: JSON
    multiagent: JSON | None


class AgentDocument(AgentFields):
    """BetaManagedAgentsAgent: `AgentFields` and what the server adds. Older versions are
    stored as `agent_version` documents of the same shape, whose id is
    `<agent id>@<version>`."""

    id: str
    type: Literal["agent"]
    version: int
    created_at: str
    updated_at: str
    archived_at: str | None


class SessionAgent(TypedDict):
    """BetaManagedAgentsSessionAgent: the snapshot of an agent a session runs."""

    id: str
    type: Literal["agent"]
    version: int
    name: str
    description: str | None
    model: ModelConfig
    system: str | None
    tools: list[JSON]
    mcp_servers: list[JSON]
    skills: list[JSON]
    execution_identity: JSON
    multiagent: NotRequired[JSON | None]  # a roster member's snapshot has none


# Environments -----------------------------------------------------------------------------

class EnvironmentDocument(TypedDict):
    """BetaEnvironment."""

    id: str
    type: Literal["environment"]
    name: str
    config: JSON  # {"type": "cloud", ...} or {"type": "self_hosted", ...}
    description: str | None
    metadata: Metadata
    scope: Literal["organization", "account"]
    created_at: str
    updated_at: str
    archived_at: str | None


class EnvironmentDeleted(TypedDict):
    id: str
    type: Literal["environment_deleted"]


# Sessions ---------------------------------------------------------------------------------

class FileResource(TypedDict):
    """BetaManagedAgentsFileResource."""

    id: str
    type: Literal["file"]
    file_id: str
    mount_path: str
    created_at: str
    updated_at: str


class MemoryStoreResource(TypedDict):
    """BetaManagedAgentsMemoryStoreResource: named by its store, no id of its own. The
    store's name, description and mount path are snapshotted when it is attached."""

    type: Literal["memory_store"]
    memory_store_id: str
    access: Literal["read_write", "read_only"]
    instructions: str | None
    name: NotRequired[str]
    description: NotRequired[str]
    mount_path: NotRequired[str]


SessionResource = FileResource | MemoryStoreResource


class CacheCreation(TypedDict):
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


class SessionUsage(TypedDict):
    """BetaManagedAgentsSessionUsage: the session's model requests, summed."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation: CacheCreation
    list_cost: NotRequired[JSON]  # {"amount": "0.012", "currency": "USD"}, once billed


class SessionStats(TypedDict):
    active_seconds: float
    duration_seconds: float


class SessionDocument(TypedDict):
    """BetaManagedAgentsSession."""

    id: str
    type: Literal["session"]
    agent: SessionAgent
    environment_id: str
    title: str | None
    metadata: Metadata
    vault_ids: list[str]
    budget: JSON | None
    status: SessionStatus
    resources: list[SessionResource]
    outcome_evaluations: list[JSON]
    stats: SessionStats
    usage: SessionUsage
    deployment_id: str | None
    created_at: str
    updated_at: str
    archived_at: str | None


class SessionDeleted(TypedDict):
    id: str
    type: Literal["session_deleted"]


class ThreadDocument(TypedDict):
    """BetaManagedAgentsSessionThread (multiagent sessions)."""

    id: str
    type: Literal["session_thread"]
    session_id: str
    agent: SessionAgent  # a roster member's snapshot (`session_roster`)
    parent_thread_id: str | None
    status: SessionStatus
    created_at: str
    updated_at: str
    archived_at: str | None
    stats: JSON | None
    usage: JSON | None
    workflow_run_id: str | None


# Files ------------------------------------------------------------------------------------

class FileDocument(TypedDict):
    """BetaFileMetadata as the store keeps it: `path`, where its bytes are, is ours and
    never sent (`files.public`)."""

    id: str
    type: Literal["file"]
    filename: str
    mime_type: str
    size_bytes: int
    created_at: str
    downloadable: bool
    expires_at: str | None
    scope: JSON | None
    path: str


# Envelopes --------------------------------------------------------------------------------

T = TypeVar("T")


class Page(TypedDict, Generic[T]):
    """A list envelope (SyncPageCursor)."""

    data: list[T]
    next_page: str | None


class SessionPage(TypedDict, Generic[T]):
    """The sessions list envelope (SyncBidirectionalPageCursor)."""

    data: list[T]
    next_page: str | None
    prev_page: str | None


class ErrorDetails(TypedDict):
    error_code: str


class ErrorObject(TypedDict):
    type: str  # the status's error type (invalid_request_error, not_found_error, ...)
    message: str
    details: NotRequired[ErrorDetails]


class ErrorBody(TypedDict):
    """ErrorResponse: the body of every error status."""

    type: Literal["error"]
    error: ErrorObject
    request_id: str | None


def editable(doc: Mapping[str, Any]) -> JSON:
    """A deep copy of `doc` to edit key by key (a TypedDict takes only literal keys): an
    updater edits one, then says which document it is again (`as_agent`, ...)."""
    return copy.deepcopy(dict(doc))


# From the store ---------------------------------------------------------------------------
# The store keeps documents as JSON; each of these names the one place a stored document
# is taken to be what its builder wrote (the store never edits a document's shape).

def as_agent(doc: Mapping[str, Any]) -> AgentDocument:
    """A stored `agent` or `agent_version` document (`agent_document`, `agent_updated`)."""
    return cast(AgentDocument, doc)


def as_environment(doc: Mapping[str, Any]) -> EnvironmentDocument:
    """A stored `environment` document (`environment_document`)."""
    return cast(EnvironmentDocument, doc)


def as_session_agent(doc: Mapping[str, Any]) -> SessionAgent:
    """A session's agent snapshot (`session_agent`), stored inside its session or built
    key by key from an agent's document."""
    return cast(SessionAgent, doc)


def as_session_resource(doc: Mapping[str, Any]) -> SessionResource:
    """A session resource (`resource_document`), as a session or a resource request has
    it: its `type` says which."""
    return cast(SessionResource, doc)


def as_session(doc: Mapping[str, Any]) -> SessionDocument:
    """A stored `session` document (`session_document`, `session_updated`, ...)."""
    return cast(SessionDocument, doc)


def as_thread(doc: Mapping[str, Any]) -> ThreadDocument:
    """A stored `session_thread` document (`thread_document`)."""
    return cast(ThreadDocument, doc)


def as_file(doc: Mapping[str, Any]) -> FileDocument:
    """A stored `file` document (`files.file_document`)."""
    return cast(FileDocument, doc)
