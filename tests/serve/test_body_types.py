"""The request bodies' TypedDicts (`AgentFields`, `AgentPatch`, `EnvironmentFields`,
`EnvironmentPatch`, `SessionFields`, `SessionPatch`, `DeploymentFields`,
`DeploymentPatch`) against the official SDK's params types and against what the readers
return.

Each type names exactly the body fields the SDK's params declare (less `betas` and
`workspace_id`, which the SDK sends as headers, and what wisp refuses: a session's
`vault_ids` cannot change), and requires what the SDK requires. Each reader's output, for
a body that sets every field and one that clears what can be cleared, is exactly its
type: the keys it declares, values of their types (test_document_types' check). The SDK
types are read here only: the server never imports `anthropic`."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, get_origin, get_type_hints

import pytest

anthropic = pytest.importorskip("anthropic")

from anthropic.types.beta import (  # noqa: E402
    agent_create_params,
    agent_update_params,
    deployment_create_params,
    deployment_update_params,
    environment_create_params,
    environment_update_params,
    session_create_params,
    session_update_params,
)
from anthropic.types.beta.beta_managed_agents_session_agent_update_param import (  # noqa: E402
    BetaManagedAgentsSessionAgentUpdateParam,
)

from tests.serve.test_document_types import mismatches  # noqa: E402
from wisp.serve import shapes  # noqa: E402
from wisp.serve.shapes import ShapeError  # noqa: E402
from wisp.serve.shapes import deployments as deploy  # noqa: E402
from wisp.serve.shapes.sessions import SessionAgentPatch  # noqa: E402

SENT_AS_HEADERS = {"betas", "workspace_id"}

# ours, the SDK's, the SDK's fields wisp refuses
PAIRS: dict[str, tuple[Any, Any, set[str]]] = {
    "agent create": (shapes.AgentFields, agent_create_params.AgentCreateParams, set()),
    "agent update": (shapes.AgentPatch, agent_update_params.AgentUpdateParams, set()),
    "environment create": (shapes.EnvironmentFields,
                           environment_create_params.EnvironmentCreateParams, set()),
    "environment update": (shapes.EnvironmentPatch,
                           environment_update_params.EnvironmentUpdateParams, set()),
    "session create": (shapes.SessionFields, session_create_params.SessionCreateParams,
                       set()),
    "session update": (shapes.SessionPatch, session_update_params.SessionUpdateParams,
                       {"vault_ids"}),
    "session update agent": (SessionAgentPatch, BetaManagedAgentsSessionAgentUpdateParam,
                             set()),
    "deployment create": (deploy.DeploymentFields,
                          deployment_create_params.DeploymentCreateParams, set()),
    "deployment update": (deploy.DeploymentPatch,
                          deployment_update_params.DeploymentUpdateParams, set()),
}


def sdk_keys(params: Any) -> tuple[set[str], set[str]]:
    """An SDK params TypedDict's (required, all) keys, read from its annotations: the SDK
    declares `total=False` with `Required[...]` under postponed annotations, which its
    runtime `__required_keys__` does not see."""
    hints = get_type_hints(params, include_extras=True)
    return {k for k, h in hints.items() if get_origin(h) is typing.Required}, set(hints)


@pytest.mark.parametrize("name", PAIRS)
def test_the_body_type_has_the_sdks_fields(name: str) -> None:
    ours, theirs, refused = PAIRS[name]
    required, declared = sdk_keys(theirs)
    assert refused <= declared  # what is refused is a field the SDK has
    assert set(get_type_hints(ours)) == declared - SENT_AS_HEADERS - refused
    assert required <= ours.__required_keys__


def test_a_session_update_refuses_vault_ids() -> None:
    with pytest.raises(ShapeError, match="vault_ids"):
        shapes.session_update({"vault_ids": ["vlt_1"]})


AGENT = {"name": "a", "model": "claude-sonnet-4-5"}
TOOLS = [{"type": "agent_toolset_20260401"},
         {"type": "mcp_toolset", "mcp_server_name": "gh"}]
MCP = [{"type": "url", "name": "gh", "url": "https://mcp.example/gh"}]
EVENTS = [{"type": "user.message", "content": [{"type": "text", "text": "hi"}]}]
BUDGET = {"type": "limit", "max_list_cost": {"amount": "1.00", "currency": "USD"}}
SCHEDULE = {"type": "cron", "expression": "0 * * * *", "timezone": "UTC"}
FILES = [{"type": "file", "file_id": "file_1"}]

# reader, body, its type; each body sets every field (or clears what can be cleared)
READS: dict[str, tuple[Callable[[object], object], dict[str, Any], Any]] = {
    "agent create": (shapes.agent_create, {
        **AGENT, "description": "d", "system": "s", "metadata": {"k": "v"},
        "tools": TOOLS, "mcp_servers": MCP,
        "skills": [{"type": "custom", "skill_id": "skill_1"}],
        "execution_identity": {"type": "aws_role", "role_arn": "arn:aws:iam::1:role/r"},
        "multiagent": {"type": "coordinator", "agents": ["agent_2"]}}, shapes.AgentFields),
    "agent create, defaults": (shapes.agent_create, AGENT, shapes.AgentFields),
    "agent update": (shapes.agent_update, {
        "name": "b", "model": {"id": "claude-opus-4-1", "effort": "max", "speed": "fast"},
        "description": "d", "system": "s", "tools": TOOLS, "mcp_servers": MCP,
        "skills": [{"type": "custom", "skill_id": "skill_1", "version": "2"}],
        "execution_identity": {"type": "service_account"},
        "metadata": {"k": "v", "gone": None},
        "multiagent": {"type": "coordinator", "agents": ["agent_2"]}, "version": 3},
        shapes.AgentPatch),
    "agent update, cleared": (shapes.agent_update, {
        "model": "claude-opus-4-1", "description": None, "system": "", "tools": None,
        "mcp_servers": None, "skills": None, "execution_identity": None,
        "metadata": None, "multiagent": None, "version": None}, shapes.AgentPatch),
    "environment create": (shapes.environment_create, {
        "name": "e", "description": "d", "metadata": {"k": "v"}, "scope": "account",
        "config": {"type": "self_hosted"}}, shapes.EnvironmentFields),
    "environment update": (shapes.environment_update, {
        "name": "f", "description": "d", "metadata": {"k": "v", "gone": None},
        "scope": "account", "config": {"type": "cloud"}}, shapes.EnvironmentPatch),
    "environment update, cleared": (shapes.environment_update, {
        "name": None, "description": None, "config": None, "scope": None},
        shapes.EnvironmentPatch),
    "session create": (shapes.session_create, {
        "agent": {"type": "agent", "id": "agent_1", "version": 2},
        "environment_id": "env_1", "title": "t", "metadata": {"k": "v"},
        "vault_ids": ["vlt_1"], "budget": BUDGET, "resources": FILES,
        "initial_events": EVENTS}, shapes.SessionFields),
    "session update": (shapes.session_update, {
        "agent": {"tools": TOOLS, "mcp_servers": MCP}, "budget": BUDGET,
        "metadata": {"k": "v", "gone": None}, "title": "t"}, shapes.SessionPatch),
    "session update, cleared": (shapes.session_update, {
        "agent": {}, "budget": None, "title": None}, shapes.SessionPatch),
    "deployment create": (deploy.deployment_create, {
        "name": "d", "agent": "agent_1", "environment_id": "env_1",
        "initial_events": EVENTS, "description": "x", "resources": FILES,
        "budget": BUDGET, "schedule": SCHEDULE, "vault_ids": ["vlt_1"],
        "metadata": {"k": "v"}}, deploy.DeploymentFields),
    "deployment create, defaults": (deploy.deployment_create, {
        "name": "d", "agent": {"type": "agent", "id": "agent_1", "version": 1},
        "environment_id": "env_1", "initial_events": EVENTS}, deploy.DeploymentFields),
    "deployment update": (deploy.deployment_update, {
        "name": "e", "agent": {"type": "agent", "id": "agent_1", "version": 2},
        "environment_id": "env_2", "initial_events": EVENTS, "description": "x",
        "resources": FILES, "budget": BUDGET, "schedule": SCHEDULE, "vault_ids": ["vlt_1"],
        "metadata": {"k": "v", "gone": None}}, deploy.DeploymentPatch),
    "deployment update, cleared": (deploy.deployment_update, {
        "description": None, "resources": None, "budget": None, "schedule": None,
        "vault_ids": None, "metadata": None}, deploy.DeploymentPatch),
}


@pytest.mark.parametrize("name", READS)
def test_the_reader_returns_its_type(name: str) -> None:
    read, body, kind = READS[name]
    value = read(body)
    assert mismatches(value, kind) == []
    if not kind.__required_keys__:  # a patch: the fields the body sent, no others
        skipped = {k for k, v in body.items() if v is None and k in ("name", "config",
                                                                     "scope", "version")}
        assert isinstance(value, dict) and set(value) == set(body) - skipped


def test_the_check_sees_a_patch_drift() -> None:
    """What `mismatches` would say if a reader wrote outside its patch type."""
    patch: dict[str, Any] = dict(shapes.session_update({"title": "t"}))
    patch["vault_ids"] = ["vlt_1"]
    patch["title"] = 3
    assert sorted(mismatches(patch, shapes.SessionPatch)) == [
        "doc.title: 3 is no str | None",
        "doc: SessionPatch does not declare vault_ids",
    ]
