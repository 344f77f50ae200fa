"""The documents of the resources a session draws on (vaults and their credentials,
skills, memory stores and memories) and of the deployments that start sessions: one
`TypedDict` per resource, as `documents` has for agents, environments and sessions (see
there), with their `as_*` readers of a stored document."""

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.documents import Metadata

# Vaults -----------------------------------------------------------------------------------

class VaultDocument(TypedDict):
    """BetaManagedAgentsVault."""

    id: str
    type: Literal["vault"]
    display_name: str
    metadata: Metadata
    created_at: str
    updated_at: str
    archived_at: str | None


class CredentialDocument(TypedDict):
    """BetaManagedAgentsCredential; its secret is stored apart and never returned."""

    id: str
    type: Literal["vault_credential"]
    vault_id: str
    display_name: str | None
    metadata: Metadata
    auth: JSON  # static_bearer or mcp_oauth, without the token
    created_at: str
    updated_at: str
    archived_at: str | None


class CredentialValidation(TypedDict):
    """BetaManagedAgentsCredentialValidation (`mcp_oauth_validate`)."""

    type: Literal["vault_credential_validation"]
    credential_id: str
    vault_id: str
    status: str
    has_refresh_token: bool
    mcp_probe: JSON | None
    refresh: JSON | None
    validated_at: str


# Skills -----------------------------------------------------------------------------------

class SkillDocument(TypedDict):
    """BetaSkill (custom skills: `source` is {"type": "custom"})."""

    id: str
    type: Literal["skill"]
    display_name: str
    source: JSON
    latest_version_id: str
    created_at: str
    updated_at: str


class SkillVersionDocument(TypedDict):
    id: str
    type: Literal["skill_version"]
    skill_id: str
    name: str
    description: str
    created_at: str


# Deployments ------------------------------------------------------------------------------

class AgentReference(TypedDict):
    """BetaManagedAgentsAgentReference: an agent pinned at a version."""

    type: Literal["agent"]
    id: str
    version: int


class DeploymentDocument(TypedDict):
    """BetaManagedAgentsDeployment."""

    id: str
    type: Literal["deployment"]
    name: str
    description: str | None
    agent: AgentReference
    environment_id: str
    initial_events: list[JSON]
    resources: list[JSON]
    budget: JSON | None
    schedule: JSON | None  # with `upcoming_runs_at` as of when it is read
    vault_ids: list[str]
    metadata: Metadata
    status: Literal["active", "paused"]
    paused_reason: JSON | None
    created_at: str
    updated_at: str
    archived_at: str | None


class DeploymentRunDocument(TypedDict):
    """BetaManagedAgentsDeploymentRun."""

    id: str
    type: Literal["deployment_run"]
    deployment_id: str
    agent: AgentReference
    trigger_context: JSON
    session_id: str | None
    error: JSON | None
    created_at: str


# Memory -----------------------------------------------------------------------------------

class MemoryStoreDocument(TypedDict):
    """BetaManagedAgentsMemoryStore."""

    id: str
    type: Literal["memory_store"]
    name: str
    description: str
    metadata: Metadata
    created_at: str
    updated_at: str
    archived_at: str | None


class MemoryDocument(TypedDict):
    """BetaManagedAgentsMemory; `content` is None in the `basic` view."""

    id: str
    type: Literal["memory"]
    memory_store_id: str
    path: str
    content: str | None
    content_sha256: str
    content_size_bytes: int
    memory_version_id: str
    created_at: str
    updated_at: str


Operation = Literal["created", "modified", "deleted"]


class MemoryVersionDocument(TypedDict):
    """BetaManagedAgentsMemoryVersion; a redacted or deleted version keeps no content."""

    id: str
    type: Literal["memory_version"]
    memory_id: str
    memory_store_id: str
    operation: Operation
    path: str | None
    content: str | None
    content_sha256: str | None
    content_size_bytes: int | None
    created_at: str
    created_by: JSON
    redacted_at: str | None
    redacted_by: JSON | None


# From the store ---------------------------------------------------------------------------

def as_vault(doc: Mapping[str, Any]) -> VaultDocument:
    """A stored `vault` document (`vault_create`, `vault_updated`)."""
    return cast(VaultDocument, doc)


def as_credential(doc: Mapping[str, Any]) -> CredentialDocument:
    """A stored `vault_credential` document (`credential_create`, `credential_updated`)."""
    return cast(CredentialDocument, doc)


def as_skill(doc: Mapping[str, Any]) -> SkillDocument:
    """A stored `skill` document (`skill_document`)."""
    return cast(SkillDocument, doc)


def as_skill_version(doc: Mapping[str, Any]) -> SkillVersionDocument:
    """A stored skill version document (`skills.version_document`)."""
    return cast(SkillVersionDocument, doc)


def as_deployment(doc: Mapping[str, Any]) -> DeploymentDocument:
    """A stored `deployment` document (`deployment_document`, `deployment_updated`)."""
    return cast(DeploymentDocument, doc)


def as_memory_store(doc: Mapping[str, Any]) -> MemoryStoreDocument:
    """A stored `memory_store` document (`store_create`, `store_updated`)."""
    return cast(MemoryStoreDocument, doc)


def as_memory(doc: Mapping[str, Any]) -> MemoryDocument:
    """A stored `memory` document (`memory_document`)."""
    return cast(MemoryDocument, doc)


def as_memory_version(doc: Mapping[str, Any]) -> MemoryVersionDocument:
    """A stored `memory_version` document (`version_document`, `redacted`)."""
    return cast(MemoryVersionDocument, doc)

