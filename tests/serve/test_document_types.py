"""Every document builder of wisp.serve.shapes writes exactly what its TypedDict
(wisp.serve.shapes.documents and .companions) declares: each required key, no undeclared
one, each value of its declared type (Literal tags included), recursively. So the types
cannot drift from the documents on the wire (test_shapes.py checks those against the
SDK's models)."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from wisp.serve import shapes
from wisp.serve.files import file_document
from wisp.serve.shapes import companions as more
from wisp.serve.shapes import deployments as deploy
from wisp.serve.shapes import documents as docs
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.shapes import multiagent
from wisp.serve.shapes import skills as skill_shapes
from wisp.serve.shapes import vaults as vault_shapes

NOW = "2026-01-02T03:04:05.000Z"


def mismatches(value: object, hint: Any, path: str = "doc") -> list[str]:
    """Where `value` is not of type `hint` (empty when it is)."""
    origin = get_origin(hint)
    if hint is Any:
        return []
    if origin in (typing.Union, types.UnionType):
        found = [mismatches(value, member, path) for member in get_args(hint)]
        return [] if any(not f for f in found) else [f"{path}: {value!r} is no {hint}"]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{path}: {value!r} not in {hint}"]
    if is_typeddict(origin or hint):
        return typed_dict_mismatches(value, hint, path)
    return plain_mismatches(value, hint, origin, path)


def typed_dict_mismatches(value: object, hint: Any, path: str) -> list[str]:
    cls = get_origin(hint) or hint
    if not isinstance(value, dict):
        return [f"{path}: expected an object for {cls.__name__}"]
    fields = get_type_hints(cls)
    if get_origin(hint) is not None:  # Page[X]: its one parameter is the item type
        fields = {**fields, "data": list[get_args(hint)[0]]}  # type: ignore[misc]
    out = [f"{path}: {cls.__name__} misses {key}"
           for key in sorted(cls.__required_keys__ - value.keys())]
    out += [f"{path}: {cls.__name__} does not declare {key}"
            for key in sorted(value.keys() - fields.keys())]
    for key in value.keys() & fields.keys():
        out += mismatches(value[key], fields[key], f"{path}.{key}")
    return out


def plain_mismatches(value: object, hint: Any, origin: Any, path: str) -> list[str]:
    if hint is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        return [m for i, item in enumerate(value)
                for m in mismatches(item, get_args(hint)[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        return [m for key, item in value.items()
                for m in mismatches(item, get_args(hint)[1], f"{path}.{key}")]
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return [] if ok else [f"{path}: {value!r} is no {hint.__name__}"]


# One sample of every builder's output ----------------------------------------------------

AGENT_BODY = {"name": "a", "model": "claude-sonnet-4-5", "system": "be brief",
              "tools": [{"type": "agent_toolset_20260401"}],
              "metadata": {"team": "x"}}


def agent() -> docs.AgentDocument:
    return shapes.agent_document(shapes.agent_create(AGENT_BODY), now=NOW)


def environment() -> docs.EnvironmentDocument:
    return shapes.environment_document(shapes.environment_create({"name": "e"}), now=NOW)


def session() -> docs.SessionDocument:
    fields = shapes.session_create({
        "agent": "agent_1", "environment_id": "env_1", "title": "t",
        "resources": [{"type": "file", "file_id": "file_1"}],
        "budget": {"type": "limit", "max_list_cost": {"amount": "1.00", "currency": "USD"}}})
    return shapes.session_document(fields, shapes.session_agent(agent()), now=NOW)


def deployment() -> more.DeploymentDocument:
    fields = deploy.deployment_create({
        "name": "d", "agent": {"type": "agent", "id": "agent_1", "version": 1},
        "environment_id": "env_1",
        "initial_events": [{"type": "user.message",
                            "content": [{"type": "text", "text": "hi"}]}],
        "schedule": {"type": "cron", "expression": "0 * * * *", "timezone": "UTC"}})
    return deploy.deployment_document(fields)


def memory() -> more.MemoryDocument:
    return memory_shapes.memory_document("memstore_1", "/notes.md", "hello", "memver_1")


def memory_version() -> more.MemoryVersionDocument:
    return memory_shapes.version_document(memory(), "created", {"type": "api_actor"})


def credential() -> more.CredentialDocument:
    return vault_shapes.credential_create("vlt_1", {
        "display_name": "c", "auth": {"type": "static_bearer", "token": "t",
                                      "mcp_server_url": "https://mcp.example.com/mcp"}})[0]


def roster_member() -> docs.SessionAgent:
    """A thread's agent: a snapshot without a roster of its own (`session_roster`)."""
    member = shapes.session_agent(agent())
    member.pop("multiagent", None)
    return member


def file_resource() -> docs.SessionResource:
    return shapes.resource_document({"type": "file", "file_id": "file_1",
                                     "mount_path": "/mnt/session/uploads/file_1"}, now=NOW)


def memory_resource() -> docs.SessionResource:
    return shapes.resource_document({"type": "memory_store", "memory_store_id": "memstore_1",
                                     "access": "read_only", "instructions": None})


SAMPLES: dict[str, tuple[Callable[[], object], Any]] = {
    "agent fields": (lambda: shapes.agent_create(AGENT_BODY), docs.AgentFields),
    "agent": (agent, docs.AgentDocument),
    "agent updated": (lambda: shapes.agent_updated(
        agent(), shapes.agent_update({"name": "b", "model": "claude-opus-4-1"})),
        docs.AgentDocument),
    "agent archived": (lambda: shapes.archived(agent()), docs.AgentDocument),
    "session agent": (lambda: shapes.session_agent(agent()), docs.SessionAgent),
    "environment": (environment, docs.EnvironmentDocument),
    "environment updated": (lambda: shapes.environment_updated(
        environment(), shapes.environment_update({"description": "d",
                                                  "metadata": {"k": "v"}})),
        docs.EnvironmentDocument),
    "environment deleted": (lambda: shapes.deleted_environment("env_1"),
                            docs.EnvironmentDeleted),
    "session": (session, docs.SessionDocument),
    "session updated": (lambda: shapes.session_updated(
        session(), shapes.session_update({"title": None, "metadata": {"k": "v"}})),
        docs.SessionDocument),
    "session status": (lambda: shapes.session_status(session(), "running"),
                       docs.SessionDocument),
    "session usage": (lambda: shapes.session_usage_added(session(), {
        "input_tokens": 3, "output_tokens": 4, "cache_creation_input_tokens": 5}),
        docs.SessionDocument),
    "session deleted": (lambda: shapes.deleted_session("sesn_1"), docs.SessionDeleted),
    "file resource": (file_resource, docs.SessionResource),
    "memory store resource": (memory_resource, docs.SessionResource),
    "thread": (lambda: multiagent.thread_document("sesn_1", roster_member(), None),
               docs.ThreadDocument),
    "vault": (lambda: vault_shapes.vault_create({"display_name": "v"}), more.VaultDocument),
    "vault updated": (lambda: vault_shapes.vault_updated(
        vault_shapes.vault_create({"display_name": "v"}), {"display_name": "w"}),
        more.VaultDocument),
    "credential": (credential, more.CredentialDocument),
    "credential updated": (lambda: vault_shapes.credential_updated(
        credential(), {"token": "t"}, {"display_name": "d"})[0], more.CredentialDocument),
    "credential validation": (lambda: vault_shapes.validation(credential(), "valid", None),
                              more.CredentialValidation),
    "skill": (lambda: skill_shapes.skill_document("skill_1", "s", "skillver_1"),
              more.SkillDocument),
    "skill version": (lambda: skill_shapes.version_document(
        "skill_1", skill_shapes.Upload("s", "does s", {})), more.SkillVersionDocument),
    "deployment": (deployment, more.DeploymentDocument),
    "deployment updated": (lambda: deploy.deployment_updated(
        deployment(), deploy.deployment_update({"name": "e", "metadata": {"k": "v"}})),
        more.DeploymentDocument),
    "deployment run": (lambda: deploy.run_document(deployment(), {"type": "manual"},
                                                   session_id="sesn_1"),
                       more.DeploymentRunDocument),
    "memory store": (lambda: memory_shapes.store_create({"name": "m"}),
                     more.MemoryStoreDocument),
    "memory store updated": (lambda: memory_shapes.store_updated(
        memory_shapes.store_create({"name": "m"}), {"description": "d"}),
        more.MemoryStoreDocument),
    "memory": (memory, more.MemoryDocument),
    "memory basic view": (lambda: memory_shapes.viewed(memory(), "basic"),
                          more.MemoryDocument),
    "memory version": (memory_version, more.MemoryVersionDocument),
    "memory version redacted": (lambda: memory_shapes.redacted(
        memory_version(), {"type": "api_actor"}), more.MemoryVersionDocument),
    "file": (lambda: file_document("file_1", "a.txt", "text/plain", 3,
                                       expires_at=None, path="/tmp/a"),
             docs.FileDocument),
    "page": (lambda: shapes.list_page([agent()], "page_2"), docs.Page[docs.AgentDocument]),
    "session page": (lambda: shapes.session_list_page([session()], None, "page_0"),
                     docs.SessionPage[docs.SessionDocument]),
    "error": (lambda: shapes.error_body(400, "no", error_code="environment_archived",
                                        request_id="req_1"), docs.ErrorBody),
    "error without details": (lambda: shapes.error_body(500, "no"), docs.ErrorBody),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_the_builder_writes_what_its_type_declares(name: str) -> None:
    build, hint = SAMPLES[name]
    assert mismatches(build(), hint) == []


def test_the_check_sees_drift() -> None:
    doc: dict[str, Any] = dict(agent())
    doc["stray"] = 1
    del doc["version"]
    doc["type"] = "agents"
    doc["model"] = {**doc["model"], "speed": 3}
    assert sorted(mismatches(doc, docs.AgentDocument)) == [
        "doc.model.speed: 3 not in typing.Literal['standard', 'fast']",
        "doc.type: 'agents' not in typing.Literal['agent']",
        "doc: AgentDocument does not declare stray",
        "doc: AgentDocument misses version",
    ]


def test_every_document_type_has_a_sample() -> None:
    """A new TypedDict in documents.py needs a builder sample here."""
    sampled = {get_origin(hint) or hint for _, hint in SAMPLES.values()}
    sampled |= {member for _, hint in SAMPLES.values() for member in get_args(hint)}
    declared = {value for module in (docs, more) for value in vars(module).values()
                if is_typeddict(value) and value.__module__ == module.__name__}
    nested = {docs.Effort, docs.ModelConfig, docs.CacheCreation, docs.SessionUsage,
              docs.SessionStats, more.AgentReference, docs.ErrorDetails, docs.ErrorObject,
              docs.FileResource, docs.MemoryStoreResource}
    assert declared - sampled - nested == set()
