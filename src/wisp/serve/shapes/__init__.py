"""The JSON shapes of the Managed Agents API as the official `anthropic` SDK defines them
(docs/managed-agents-api.md): pure functions, no I/O.

Requests: `agent_create`, `agent_update`, `environment_create`, `environment_update`,
`session_create`, `session_update` and `send_events` take a decoded JSON body and return
it normalised (defaults filled in, unknown keys dropped), or raise `ShapeError` naming the
field at fault (`tools[0].type: expected one of ...`); a create returns a TypedDict of the
normalised body (`AgentFields`, `EnvironmentFields`, `SessionFields`), an update one of
its patch (`AgentPatch`, `EnvironmentPatch`, `SessionPatch`; deployments' in
`deployments`). The `*_query` functions do the same for the query strings of the list and
stream endpoints.

Responses: `agent_document`, `environment_document` and `session_document` add the
server's fields (id, `type`, timestamps, `version`, ...); `agent_updated`,
`environment_updated`, `session_updated` and `archived` derive the next document. Every
document has a TypedDict tagged by a `Literal` `type` (`AgentDocument`,
`SessionDocument`, ..., `documents` and `companions`), which its builder returns; a
document read back from the store is taken as one by its `as_*` function (`as_agent`,
`as_session`, ...), the one place that says so.

Events: one builder per event type the server emits (`agent_message`, `status_idle`,
`model_request_start`, ...), and `client_event_record` for the echo of a posted event, so
no other module writes an event dict by hand.

One module per concern, each importing only those below it:
  documents      the TypedDicts of agents, environments, sessions, threads, files,
                 list envelopes and error bodies, and their `as_*`
  companions     the TypedDicts of vaults, credentials, skills, memory and deployments
  common         ShapeError, the primitive readers (`read_str`, `optional_field`, ...),
                 metadata, ids and timestamps
  agent_tools    tools[] (toolsets, custom tools, MCP) and mcp_servers; tool_policy
  agents         the agent requests and documents
  environments   the environment requests and documents
  content        content blocks
  client_events  ClientEvent (one TypedDict per type), send_events, client_event_record
  event_types    ServerEvent: one TypedDict per server event type
  resources      session resources (files mounted in the workspace)
  sessions       the session requests, its agent snapshot and documents
  server_events  agent_message, status_idle, model_request_*, previews, ...
  outcomes       outcome_evaluations entries and span.outcome_evaluation_* events
  queries        list envelopes and query strings
  support        what this server refuses rather than store and ignore
  wire           error bodies and SSE frames
(and, used by their own routes as modules: multiagent, memory, vaults, skills, deployments)
Callers use this package (`shapes.X`), not the modules: where a name lives may change.
The modules share their helpers by public names: none imports another's `_private`.
"""

from __future__ import annotations

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import (
    AGENT_TOOL_INPUT_SCHEMAS,
    AGENT_TOOL_NAMES,
    AGENT_TOOLSET,
    POLICIES,
    custom_tool_names,
    tool_policy,
)
from wisp.serve.shapes.agents import (
    DEFAULT_EFFORT,
    EFFORTS,
    AgentPatch,
    agent_create,
    agent_document,
    agent_update,
    agent_updated,
)
from wisp.serve.shapes.client_events import (
    CLIENT_EVENT_TYPES,
    ClientEvent,
    ClientEventRecord,
    Reply,
    TurnStarter,
    client_event,
    client_event_record,
    processed,
    send_events,
    send_events_response,
    starts_a_turn,
    stored_client_events,
)
from wisp.serve.shapes.common import (
    Parser,
    ShapeError,
    archived,
    archived_once,
    instant,
    new_id,
    timestamp,
)
from wisp.serve.shapes.companions import (
    AgentReference,
    CredentialDocument,
    CredentialValidation,
    DeploymentDocument,
    DeploymentRunDocument,
    MemoryDocument,
    MemoryStoreDocument,
    MemoryVersionDocument,
    Operation,
    SkillDocument,
    SkillVersionDocument,
    VaultDocument,
    as_credential,
    as_deployment,
    as_memory,
    as_memory_store,
    as_memory_version,
    as_skill,
    as_skill_version,
    as_vault,
)
from wisp.serve.shapes.documents import (
    AgentDocument,
    AgentFields,
    EnvironmentDeleted,
    EnvironmentDocument,
    ErrorBody,
    FileDocument,
    ModelConfig,
    Page,
    SessionAgent,
    SessionDeleted,
    SessionDocument,
    SessionPage,
    SessionResource,
    SessionStatus,
    ThreadDocument,
    as_agent,
    as_environment,
    as_file,
    as_session,
    as_session_agent,
    as_session_resource,
    as_thread,
    editable,
)
from wisp.serve.shapes.environments import (
    EnvironmentFields,
    EnvironmentPatch,
    deleted_environment,
    environment_create,
    environment_document,
    environment_update,
    environment_updated,
)
from wisp.serve.shapes.event_types import Preview, ServerEvent, log_entry
from wisp.serve.shapes.queries import (
    EVENT_TYPES,
    Query,
    agents_query,
    created_within,
    events_query,
    files_query,
    list_page,
    resources_query,
    session_list_page,
    sessions_query,
    stream_query,
)
from wisp.serve.shapes.resources import (
    resource_document,
    resource_param,
    resource_params,
)
from wisp.serve.shapes.server_events import (
    SESSION_ERROR_TYPES,
    STOP_REASONS,
    agent_context_compacted,
    agent_custom_tool_use,
    agent_mcp_tool_result,
    agent_mcp_tool_use,
    agent_message,
    agent_thinking,
    agent_tool_result,
    agent_tool_use,
    event_delta,
    event_start,
    model_request_end,
    model_request_start,
    session_deleted_event,
    session_error,
    session_updated_event,
    session_usage,
    status_idle,
    status_rescheduled,
    status_running,
    status_terminated,
)
from wisp.serve.shapes.sessions import (
    SESSION_STATUSES,
    AgentRef,
    SessionFields,
    SessionPatch,
    deleted_session,
    session_agent,
    session_create,
    session_document,
    session_status,
    session_update,
    session_updated,
    session_usage_added,
)
from wisp.serve.shapes.support import (
    check_agent_fields,
    check_client_events,
    check_session_fields,
)
from wisp.serve.shapes.wire import SSE_PING, error_body, sse_error, sse_frame

__all__ = [
    "AGENT_TOOLSET",
    "AGENT_TOOL_INPUT_SCHEMAS",
    "AGENT_TOOL_NAMES",
    "CLIENT_EVENT_TYPES",
    "DEFAULT_EFFORT",
    "EFFORTS",
    "EVENT_TYPES",
    "JSON",
    "POLICIES",
    "SESSION_ERROR_TYPES",
    "SESSION_STATUSES",
    "SSE_PING",
    "STOP_REASONS",
    "AgentDocument",
    "AgentFields",
    "AgentPatch",
    "AgentRef",
    "AgentReference",
    "ClientEvent",
    "ClientEventRecord",
    "CredentialDocument",
    "CredentialValidation",
    "DeploymentDocument",
    "DeploymentRunDocument",
    "EnvironmentDeleted",
    "EnvironmentDocument",
    "EnvironmentFields",
    "EnvironmentPatch",
    "ErrorBody",
    "FileDocument",
    "MemoryDocument",
    "MemoryStoreDocument",
    "MemoryVersionDocument",
    "ModelConfig",
    "Operation",
    "Page",
    "Parser",
    "Preview",
    "Query",
    "Reply",
    "ServerEvent",
    "SessionAgent",
    "SessionDeleted",
    "SessionDocument",
    "SessionFields",
    "SessionPage",
    "SessionPatch",
    "SessionResource",
    "SessionStatus",
    "ShapeError",
    "SkillDocument",
    "SkillVersionDocument",
    "ThreadDocument",
    "TurnStarter",
    "VaultDocument",
    "agent_context_compacted",
    "agent_create",
    "agent_custom_tool_use",
    "agent_document",
    "agent_mcp_tool_result",
    "agent_mcp_tool_use",
    "agent_message",
    "agent_thinking",
    "agent_tool_result",
    "agent_tool_use",
    "agent_update",
    "agent_updated",
    "agents_query",
    "archived",
    "archived_once",
    "as_agent",
    "as_credential",
    "as_deployment",
    "as_environment",
    "as_file",
    "as_memory",
    "as_memory_store",
    "as_memory_version",
    "as_session",
    "as_session_agent",
    "as_session_resource",
    "as_skill",
    "as_skill_version",
    "as_thread",
    "as_vault",
    "check_agent_fields",
    "check_client_events",
    "check_session_fields",
    "client_event",
    "client_event_record",
    "created_within",
    "custom_tool_names",
    "deleted_environment",
    "deleted_session",
    "editable",
    "environment_create",
    "environment_document",
    "environment_update",
    "environment_updated",
    "error_body",
    "event_delta",
    "event_start",
    "events_query",
    "files_query",
    "instant",
    "list_page",
    "log_entry",
    "model_request_end",
    "model_request_start",
    "new_id",
    "processed",
    "resource_document",
    "resource_param",
    "resource_params",
    "resources_query",
    "send_events",
    "send_events_response",
    "session_agent",
    "session_create",
    "session_deleted_event",
    "session_document",
    "session_error",
    "session_list_page",
    "session_status",
    "session_update",
    "session_updated",
    "session_updated_event",
    "session_usage",
    "session_usage_added",
    "sessions_query",
    "sse_error",
    "sse_frame",
    "starts_a_turn",
    "status_idle",
    "status_rescheduled",
    "status_running",
    "status_terminated",
    "stored_client_events",
    "stream_query",
    "timestamp",
    "tool_policy",
]
