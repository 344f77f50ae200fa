"""wisp.serve.shapes against the official SDK: every document and event it builds parses
with the SDK's own models (strictly, and with no field the SDK does not know), the SDK's
requests read back through the request normalisers, and bad requests name their field."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pydantic
import pytest

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

from anthropic.types.beta import (  # noqa: E402
    BetaEnvironment,
    BetaEnvironmentArchivedError,
    BetaEnvironmentDeleteResponse,
    BetaManagedAgentsAgent,
    BetaManagedAgentsDeletedSession,
    BetaManagedAgentsSession,
)
from anthropic.types.beta.sessions import (  # noqa: E402
    BetaManagedAgentsSendSessionEvents,
    BetaManagedAgentsSessionEvent,
    BetaManagedAgentsStreamSessionEvents,
)
from anthropic.types.beta.sessions.event_list_params import EventListParams  # noqa: E402

from wisp.serve import shapes  # noqa: E402
from wisp.serve.session_log import public  # noqa: E402
from wisp.serve.shapes import ShapeError  # noqa: E402

JSON = dict[str, Any]
# The SDK's event unions, validated through pydantic's public API (the SDK's own helper for
# this is private, and a release removed a private name this file once imported).
STREAM_EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
    BetaManagedAgentsStreamSessionEvents)
LOGGED_EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(BetaManagedAgentsSessionEvent)
NOW = "2026-05-01T12:00:00.000Z"


def no_extras(value: object, where: str = "") -> None:
    """Every field of a parsed SDK object is one the SDK declares (a misspelt field would
    otherwise pass as an extra). JSON Schemas and tool inputs are free-form."""
    if isinstance(value, pydantic.BaseModel):
        assert not value.model_extra, f"{where}: unknown fields {value.model_extra}"
        for name in type(value).model_fields:
            if name not in ("input_schema", "input"):
                no_extras(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            no_extras(item, f"{where}[{i}]")


def stream_event(doc: JSON) -> Any:
    parsed = STREAM_EVENTS.validate_python(doc)
    no_extras(parsed, doc["type"])
    return parsed


def logged_event(doc: JSON) -> Any:
    """An event of the log: it parses as a list item too."""
    parsed = LOGGED_EVENTS.validate_python(doc)
    no_extras(parsed, doc["type"])
    assert stream_event(doc).id == parsed.id
    return parsed


# A fake API for the real client --------------------------------------------------------------

Handler = Callable[[Any], Any]


@pytest.fixture
def api() -> Iterator[tuple[Any, dict[tuple[str, str], Handler], list[Any]]]:
    """An Anthropic client whose requests go to `routes[(method, path)]`, validating every
    response strictly as the SDK can; `seen` records the requests."""
    routes: dict[tuple[str, str], Handler] = {}
    seen: list[Any] = []

    def handle(request: Any) -> Any:
        seen.append(request)
        return routes[(request.method, request.url.path)](request)

    client = anthropic.Anthropic(
        api_key="sk-test", base_url="http://wisp.test", max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        _strict_response_validation=True)
    yield client, routes, seen
    client.close()


def body_of(request: Any) -> Any:
    return json.loads(request.content or b"{}")


def reply(doc: Any, status: int = 200) -> Any:
    return httpx2.Response(status, json=doc)


# Agents -------------------------------------------------------------------------------------

FULL_AGENT: JSON = {
    "name": "Coder",
    "model": {"id": "claude-opus-4-8", "effort": "max"},
    "system": "Be brief.",
    "description": "writes code",
    "metadata": {"team": "infra"},
    "mcp_servers": [{"type": "url", "name": "gh", "url": "https://mcp.example/gh"}],
    "tools": [
        {"type": "agent_toolset_20260401",
         "configs": [{"name": "bash", "permission_policy": {"type": "always_ask"}},
                     {"name": "web_search", "type": "web_search", "enabled": False,
                      "allowed_domains": ["example.com"]}]},
        {"type": "mcp_toolset", "mcp_server_name": "gh",
         "configs": [{"name": "create_issue", "permission_policy": {"type": "always_allow"}}]},
        {"type": "custom", "name": "lookup", "description": "Look a word up",
         "input_schema": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}},
    ],
    "skills": [{"type": "anthropic", "skill_id": "xlsx"}],
}


def test_agent_document_parses_as_the_sdk_agent():
    doc = shapes.agent_document(shapes.agent_create(FULL_AGENT), now=NOW)
    agent = BetaManagedAgentsAgent.model_validate(doc)
    no_extras(agent, "agent")
    assert agent.id.startswith("agent_") and len(agent.id) == len("agent_") + 24
    assert (agent.type, agent.version, agent.archived_at) == ("agent", 1, None)
    assert agent.model.id == "claude-opus-4-8" and agent.model.effort.type == "max"
    assert agent.model.speed == "standard"
    toolset, mcp, custom = agent.tools
    assert toolset.default_config.enabled is True
    assert toolset.default_config.permission_policy.type == "always_allow"
    assert [(c.name, c.enabled, c.permission_policy.type) for c in toolset.configs] == [
        ("bash", True, "always_ask"), ("web_search", False, "always_allow")]
    assert toolset.configs[1].allowed_domains == ["example.com"]
    assert mcp.default_config.permission_policy.type == "always_ask"
    assert mcp.configs[0].permission_policy.type == "always_allow"
    assert custom.input_schema.required == ["word"]
    assert agent.skills[0].version == "latest"
    assert agent.execution_identity.type == "service_account"
    assert agent.created_at.isoformat() == "2026-05-01T12:00:00+00:00"


def test_a_model_string_becomes_a_model_config():
    doc = shapes.agent_document(shapes.agent_create({"name": "a", "model": "claude-haiku-4-5"}))
    agent = BetaManagedAgentsAgent.model_validate(doc)
    assert agent.model.id == "claude-haiku-4-5"
    assert agent.model.effort.type == shapes.DEFAULT_EFFORT
    assert (agent.tools, agent.mcp_servers, agent.skills, agent.metadata) == ([], [], [], {})


def test_agent_create_through_the_sdk(api):
    client, routes, _ = api
    routes[("POST", "/v1/agents")] = lambda r: reply(
        shapes.agent_document(shapes.agent_create(body_of(r))))
    agent = client.beta.agents.create(
        name="Coder", model="claude-sonnet-4-6",
        tools=[{"type": "agent_toolset_20260401",
                "default_config": {"permission_policy": {"type": "always_ask"}}},
               {"type": "custom", "name": "ping", "description": "d",
                "input_schema": {"type": "object"}}])
    assert isinstance(agent, BetaManagedAgentsAgent)
    assert agent.tools[0].default_config.permission_policy.type == "always_ask"
    assert agent.tools[1].name == "ping"


def test_agent_update_patches_and_bumps_the_version():
    doc = shapes.agent_document(shapes.agent_create(FULL_AGENT), now=NOW)
    patch = shapes.agent_update({"system": "", "metadata": {"team": None, "tier": "1"},
                                 "model": {"id": "claude-opus-4-7"}, "version": 1,
                                 "unknown": True})
    assert patch["version"] == 1 and "unknown" not in patch
    new = shapes.agent_updated(doc, patch, now="2026-05-02T00:00:00.000Z")
    agent = BetaManagedAgentsAgent.model_validate(new)
    assert agent.version == 2 and agent.system is None and agent.metadata == {"tier": "1"}
    assert agent.model.id == "claude-opus-4-7"
    assert agent.model.effort.type == "max"  # an update that omits effort keeps it
    assert new["created_at"] == NOW and new["updated_at"] == "2026-05-02T00:00:00.000Z"
    assert shapes.agent_updated(new, shapes.agent_update({"name": "Coder"})) == new


def test_agent_update_can_clear_lists_but_not_the_name():
    doc = shapes.agent_document(shapes.agent_create(FULL_AGENT))
    new = shapes.agent_updated(doc, shapes.agent_update({"tools": None, "mcp_servers": []}))
    assert (new["tools"], new["mcp_servers"], new["version"]) == ([], [], 2)
    with pytest.raises(ShapeError, match=r"^name: cannot be null"):
        shapes.agent_update({"name": None})


def test_tool_policy_resolves_overrides_and_defaults():
    tools = shapes.agent_create(FULL_AGENT)["tools"]
    assert shapes.tool_policy(tools, "bash") == (True, "always_ask")
    assert shapes.tool_policy(tools, "read") == (True, "always_allow")
    assert shapes.tool_policy(tools, "web_search") == (False, "always_allow")
    assert shapes.tool_policy(tools, "create_issue", mcp_server_name="gh") == (
        True, "always_allow")
    assert shapes.tool_policy(tools, "other", mcp_server_name="gh") == (True, "always_ask")
    assert shapes.tool_policy([], "bash") is None
    assert shapes.custom_tool_names(tools) == ["lookup"]


def test_toolset_input_schemas_match_the_sdk_tool_inputs():
    from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401
    sdk_tools = {t.name: t for t in beta_agent_toolset_20260401(AgentToolContext(workdir="."))}
    assert set(sdk_tools) == set(shapes.AGENT_TOOL_INPUT_SCHEMAS)
    for name, schema in shapes.AGENT_TOOL_INPUT_SCHEMAS.items():
        sdk_schema = sdk_tools[name].input_schema
        assert set(schema["properties"]) == set(sdk_schema["properties"]), name
        assert set(schema["required"]) == set(sdk_schema.get("required", [])), name


def test_agents_list_pages_through_the_sdk(api):
    client, routes, seen = api
    docs = [shapes.agent_document(shapes.agent_create({"name": f"a{i}", "model": "m"}))
            for i in range(3)]

    def page(request: Any) -> Any:
        query = parse_qs(request.url.query.decode() if isinstance(request.url.query, bytes)
                         else request.url.query)
        args = shapes.resources_query(query)
        if args["page"] is None:
            return reply(shapes.list_page(docs[:2], next_page="cursor-2"))
        return reply(shapes.list_page(docs[2:]))

    routes[("GET", "/v1/agents")] = page
    assert [a.name for a in client.beta.agents.list(limit=2)] == ["a0", "a1", "a2"]
    second = parse_qs(urlsplit(str(seen[1].url)).query)
    assert second == {"limit": ["2"], "page": ["cursor-2"]}


# Environments -------------------------------------------------------------------------------

def test_environment_documents_parse_as_the_sdk_environment():
    default = shapes.environment_document(shapes.environment_create({"name": "box"}), now=NOW)
    env = BetaEnvironment.model_validate(default)
    no_extras(env, "environment")
    assert env.id.startswith("env_") and env.type == "environment"
    assert env.config.type == "cloud" and env.config.networking.type == "unrestricted"
    assert env.config.packages.pip == [] and env.scope == "organization"
    assert env.archived_at is None and env.created_at == NOW

    limited = shapes.environment_document(shapes.environment_create({
        "name": "lab", "description": "d", "scope": "account",
        "config": {"type": "cloud", "networking": {"type": "limited",
                                                   "allowed_hosts": ["pypi.org"]},
                   "packages": {"pip": ["requests"]}}}))
    env = BetaEnvironment.model_validate(limited)
    assert env.config.networking.allowed_hosts == ["pypi.org"]
    assert env.config.networking.allow_mcp_servers is False
    assert env.config.packages.pip == ["requests"] and env.config.packages.npm == []

    hosted = shapes.environment_create({"name": "mine", "config": {"type": "self_hosted"}})
    assert BetaEnvironment.model_validate(
        shapes.environment_document(hosted)).config.type == "self_hosted"


def test_environment_update_and_delete():
    doc = shapes.environment_document(shapes.environment_create(
        {"name": "box", "description": "old", "metadata": {"a": "1", "b": "2"}}), now=NOW)
    patch = shapes.environment_update({"description": None, "name": None,
                                       "metadata": {"a": "", "b": None, "c": "3"}})
    new = BetaEnvironment.model_validate(shapes.environment_updated(doc, patch))
    assert new.name == "box" and new.description is None and new.metadata == {"c": "3"}
    deleted = BetaEnvironmentDeleteResponse.model_validate(shapes.deleted_environment(doc["id"]))
    assert (deleted.id, deleted.type) == (doc["id"], "environment_deleted")


# Sessions -----------------------------------------------------------------------------------

def new_session(body: JSON | None = None) -> tuple[JSON, JSON]:
    agent = shapes.agent_document(shapes.agent_create(FULL_AGENT))
    fields = shapes.session_create({"agent": agent["id"], "environment_id": "env_x",
                                    **(body or {})})
    snapshot = shapes.session_agent(agent, fields["agent"]["overrides"])
    return fields, shapes.session_document(fields, snapshot, now=NOW)


def test_session_document_parses_as_the_sdk_session():
    fields, doc = new_session({"title": "t", "metadata": {"k": "v"}})
    assert fields["agent"] == {"id": doc["agent"]["id"], "version": None, "overrides": {}}
    session = BetaManagedAgentsSession.model_validate(doc)
    no_extras(session, "session")
    assert session.id.startswith("sesn_") and session.type == "session"
    assert (session.status, session.title, session.metadata) == ("idle", "t", {"k": "v"})
    assert session.agent.type == "agent" and session.agent.version == 1
    assert session.agent.tools[2].name == "lookup"
    assert session.usage.input_tokens == 0 and session.stats.duration_seconds == 0.0
    assert (session.resources, session.outcome_evaluations, session.vault_ids) == ([], [], [])
    assert session.budget is None and session.archived_at is None


def test_session_agent_reference_forms():
    ref = shapes.session_create({"environment_id": "env_x", "agent": {
        "type": "agent_with_overrides", "id": "agent_1", "version": 3,
        "system": None, "model": "claude-haiku-4-5", "unknown": 1}})["agent"]
    assert ref["version"] == 3 and set(ref["overrides"]) == {"system", "model"}
    _, doc = new_session({"agent": {"type": "agent_with_overrides", "id": "x",
                                    "system": "other", "tools": [], "mcp_servers": []}})
    session = BetaManagedAgentsSession.model_validate(doc)
    assert session.agent.system == "other" and session.agent.tools == []
    assert session.agent.name == "Coder"
    with pytest.raises(ShapeError) as caught:
        new_session({"agent": {"type": "agent_with_overrides", "id": "x", "tools": []}})
    assert caught.value.path == "agent.mcp_servers[0].name"


def test_session_update_status_usage_archive_and_delete():
    _, doc = new_session({"budget": {"type": "limit",
                                     "max_list_cost": {"amount": "5.00", "currency": "USD"}}})
    patch = shapes.session_update({"title": None, "metadata": {"k": "v"}, "budget": None,
                                   "agent": {"tools": []}})
    new = shapes.session_updated({**doc, "agent": {**doc["agent"], "mcp_servers": []}}, patch)
    new = shapes.session_usage_added(shapes.session_status(new, "running"), {
        "input_tokens": 10, "output_tokens": 3, "cache_creation_input_tokens": 2})
    new = shapes.archived(new, now="2026-06-01T00:00:00.000Z")
    session = BetaManagedAgentsSession.model_validate(new)
    assert (session.title, session.budget, session.status) == (None, None, "running")
    assert session.agent.tools == [] and session.metadata == {"k": "v"}
    assert session.usage.input_tokens == 10 and session.usage.output_tokens == 3
    assert session.usage.cache_creation.ephemeral_5m_input_tokens == 2
    assert session.archived_at.year == 2026
    gone = BetaManagedAgentsDeletedSession.model_validate(shapes.deleted_session(doc["id"]))
    assert (gone.id, gone.type) == (doc["id"], "session_deleted")


def test_session_create_and_list_through_the_sdk(api):
    client, routes, _ = api
    made: list[JSON] = []

    def create(request: Any) -> Any:
        _, doc = new_session(body_of(request))
        made.append(doc)
        return reply(doc)

    routes[("POST", "/v1/sessions")] = create
    routes[("GET", "/v1/sessions")] = lambda r: reply(shapes.session_list_page(made))
    session = client.beta.sessions.create(
        agent="agent_x", environment_id="env_x", title="hello",
        initial_events=[{"type": "user.message", "content": [{"type": "text", "text": "hi"}]}])
    assert session.title == "hello"
    assert [s.id for s in client.beta.sessions.list(statuses=["idle"])] == [session.id]


# Client events ------------------------------------------------------------------------------

CLIENT_EVENTS: list[JSON] = [
    {"type": "user.message", "content": [
        {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBO"}},
        {"type": "document", "title": "t", "source": {"type": "text", "data": "plain"}}]},
    {"type": "user.interrupt"},
    {"type": "user.tool_confirmation", "tool_use_id": "sevt_1", "result": "deny",
     "deny_message": "no"},
    {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_2",
     "content": [{"type": "text", "text": "42"}]},
    {"type": "user.tool_result", "tool_use_id": "sevt_3", "is_error": True,
     "content": [{"type": "search_result", "source": "s", "title": "t",
                  "content": [{"type": "text", "text": "x"}],
                  "citations": {"enabled": True}}]},
    {"type": "user.define_outcome", "description": "a poem",
     "rubric": {"type": "text", "content": "rhymes"}},
    {"type": "system.message", "content": [{"type": "text", "text": "be terse"}]},
]


def test_every_client_event_kind_is_covered():
    assert {e["type"] for e in CLIENT_EVENTS} == set(shapes.CLIENT_EVENT_TYPES)


@pytest.mark.parametrize("event", CLIENT_EVENTS, ids=lambda e: e["type"])
def test_client_event_records_parse_as_sdk_events(event):
    params = shapes.send_events({"events": [event]})[0]
    queued = public(shapes.client_event_record(params))  # as clients see it
    parsed = logged_event(queued)
    assert parsed.id.startswith("sevt_") and parsed.type == event["type"]
    if event["type"] == "user.define_outcome":
        assert parsed.outcome_id.startswith("outc_") and parsed.processed_at is not None
        assert parsed.max_iterations == 3
    else:
        assert parsed.processed_at is None
    done = logged_event(shapes.processed(queued, now=NOW))
    if event["type"] == "user.define_outcome":  # processed on receipt: it keeps that time
        assert done.id == parsed.id and done.processed_at == parsed.processed_at
    else:
        assert done.id == parsed.id and done.processed_at.isoformat().startswith("2026-05-01")
    sent = BetaManagedAgentsSendSessionEvents.model_validate(
        shapes.send_events_response([queued]))
    assert sent.data[0].id == queued["id"]


def test_unknown_fields_are_dropped_from_events():
    params = shapes.send_events({"events": [CLIENT_EVENTS[0]], "extra": 1})[0]
    assert params["content"][0] == {"type": "text", "text": "look"}
    assert params["content"][2]["source"] == {"type": "text", "media_type": "text/plain",
                                              "data": "plain"}


def test_events_send_through_the_sdk(api):
    client, routes, _ = api

    def send(request: Any) -> Any:
        records = [shapes.client_event_record(p) for p in shapes.send_events(body_of(request))]
        return reply(shapes.send_events_response(records))

    routes[("POST", "/v1/sessions/sesn_1/events")] = send
    sent = client.beta.sessions.events.send("sesn_1", events=[
        {"type": "user.message", "content": [{"type": "text", "text": "hi"}]},
        {"type": "user.tool_confirmation", "tool_use_id": "sevt_9", "result": "allow"}])
    assert [e.type for e in sent.data] == ["user.message", "user.tool_confirmation"]
    assert sent.data[0].content[0].text == "hi"


# Server events ------------------------------------------------------------------------------

SERVER_EVENTS: list[tuple[str, Callable[[], JSON]]] = [
    ("agent.message", lambda: shapes.agent_message("hello")),
    ("agent.thinking", shapes.agent_thinking),
    ("agent.tool_use", lambda: shapes.agent_tool_use("bash", {"command": "ls"},
                                                     policy="always_ask")),
    ("agent.tool_result", lambda: shapes.agent_tool_result("sevt_1", "out")),
    ("agent.custom_tool_use", lambda: shapes.agent_custom_tool_use("lookup", {"word": "x"})),
    ("agent.mcp_tool_use", lambda: shapes.agent_mcp_tool_use("gh", "create_issue", {},
                                                             policy="auto",
                                                             permission="deny")),
    ("agent.mcp_tool_result", lambda: shapes.agent_mcp_tool_result("sevt_2", "done",
                                                                   is_error=True)),
    ("agent.thread_context_compacted", shapes.agent_context_compacted),
    ("session.status_running", shapes.status_running),
    ("session.status_idle", shapes.status_idle),
    ("session.status_rescheduled", shapes.status_rescheduled),
    ("session.status_terminated", shapes.status_terminated),
    ("session.deleted", shapes.session_deleted_event),
    ("session.updated", lambda: shapes.session_updated_event({"title": "t", "budget": None,
                                                              "status": "ignored"})),
    ("session.error", lambda: shapes.session_error("model_overloaded_error", "busy",
                                                   retry_status="retrying")),
    ("session.usage", lambda: shapes.session_usage({"input_tokens": 5, "output_tokens": 1})),
    ("span.model_request_start", shapes.model_request_start),
    ("span.model_request_end", lambda: shapes.model_request_end(
        "sevt_4", {"input_tokens": 7, "output_tokens": 2, "speed": "fast", "other": 1})),
]


@pytest.mark.parametrize(("kind", "build"), SERVER_EVENTS, ids=[k for k, _ in SERVER_EVENTS])
def test_server_events_parse_as_sdk_events(kind, build):
    doc = build()
    parsed = logged_event(doc)
    assert parsed.type == kind and parsed.id.startswith("sevt_")
    assert parsed.processed_at.tzinfo is not None


def test_server_event_fields():
    use = logged_event(shapes.agent_tool_use("bash", {"command": "ls"}, policy="always_ask"))
    assert (use.evaluated_permission, use.evaluation.type) == ("ask", "always_ask")
    assert use.input == {"command": "ls"}
    refused = logged_event(shapes.agent_tool_use("bash", {}, policy=None, permission="deny"))
    assert refused.evaluation is None and refused.evaluated_permission == "deny"
    mcp = logged_event(shapes.agent_mcp_tool_use("gh", "x", {}, policy="auto",
                                                 permission="ask", reason_code="risky"))
    assert mcp.evaluation.evaluated_permission.reason_code == "risky"
    end = logged_event(shapes.model_request_end("sevt_4", {"input_tokens": 7}, is_error=True))
    assert end.model_request_start_id == "sevt_4" and end.model_usage.input_tokens == 7
    assert end.model_usage.cache_read_input_tokens == 0 and end.is_error is True
    error = logged_event(shapes.session_error("mcp_connection_failed_error", "down",
                                              mcp_server_name="gh"))
    assert error.error.mcp_server_name == "gh" and error.error.retry_status.type == "terminal"
    message = logged_event(shapes.agent_message([{"type": "text", "text": "a"}],
                                                event_id="sevt_fixed"))
    assert message.id == "sevt_fixed" and message.content[0].text == "a"
    updated = logged_event(shapes.session_updated_event({"title": "t", "budget": None}))
    assert updated.title == "t" and "budget" in updated.model_fields_set


def test_idle_stop_reasons_and_the_tool_runner():
    waiting = logged_event(shapes.status_idle("requires_action", event_ids=["sevt_1"]))
    assert waiting.stop_reason.event_ids == ["sevt_1"]
    assert type(waiting.stop_reason).__name__ == "BetaManagedAgentsSessionRequiresAction"
    # Each reason parses as the SDK's own stop-reason model, not as a loose extra.
    for reason in ("end_turn", "retries_exhausted", "budget_reached", "refusal"):
        idle = logged_event(shapes.status_idle(reason))
        model_name = "BetaManagedAgentsSession" + reason.title().replace("_", "")
        assert idle.stop_reason.type == reason
        assert type(idle.stop_reason).__name__ == model_name
    with pytest.raises(ValueError, match="requires_action"):
        shapes.status_idle("requires_action")
    with pytest.raises(ShapeError, match=r"^stop_reason: expected one of"):
        shapes.status_idle("done")


def test_previews_parse_as_stream_events_only():
    start = stream_event(shapes.event_start("sevt_m"))
    assert (start.type, start.event.id, start.event.type) == ("event_start", "sevt_m",
                                                              "agent.message")
    thinking = stream_event(shapes.event_start("sevt_t", "agent.thinking"))
    assert thinking.event.type == "agent.thinking"
    delta = stream_event(shapes.event_delta("sevt_m", "Hel"))
    assert (delta.event_id, delta.delta.content.text, delta.delta.index) == ("sevt_m", "Hel", 0)
    with pytest.raises(pydantic.ValidationError):
        LOGGED_EVENTS.validate_python(shapes.event_delta("sevt_m", "x"))


def test_the_sdk_reads_our_sse_frames(api):
    client, routes, seen = api
    events = [shapes.status_running(), shapes.event_start("sevt_m"),
              shapes.event_delta("sevt_m", "hi"), shapes.agent_message("hi", event_id="sevt_m"),
              shapes.status_idle()]
    body = b"".join(shapes.sse_frame(e, seq=i) for i, e in enumerate(events, 1))
    routes[("GET", "/v1/sessions/sesn_1/events/stream")] = lambda r: httpx2.Response(
        200, headers={"content-type": "text/event-stream"},
        content=shapes.SSE_PING + body + b": keepalive\n\n")
    got = list(client.beta.sessions.events.stream("sesn_1", event_deltas=["agent.message"]))
    assert [e.type for e in got] == [e["type"] for e in events]
    assert got[3].id == "sevt_m" and got[3].content[0].text == "hi"
    assert shapes.stream_query(parse_qs(urlsplit(str(seen[0].url)).query)) == ["agent.message"]


class _ToolRunnerSession:
    """The scripted session of the tool runner test. Each stream sends the log from where
    the last one stopped (after three, an empty one ends with `status_terminated`); what
    the runner posts joins the log, and after the custom tool's result another client
    approves `write`."""

    def __init__(self, log: list[JSON], write_id: str) -> None:
        self.log, self.write_id = log, write_id
        self.upto = self.streams = 0
        self.posted: list[JSON] = []

    def stream(self) -> Any:
        batch, self.upto = self.log[self.upto:], len(self.log)
        self.streams += 1
        if not batch and self.streams > 3:
            batch = [shapes.status_terminated()]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=b"".join(shapes.sse_frame(e) for e in batch))

    def send(self, request: Any) -> Any:
        records = [shapes.client_event_record(p, processed_at=shapes.timestamp())
                   for p in shapes.send_events(body_of(request))]
        self.posted.extend(records)
        self.log.extend(records)
        if records[0]["type"] == "user.custom_tool_result":  # another client approves
            self.log.append(shapes.client_event_record(shapes.client_event(
                {"type": "user.tool_confirmation", "tool_use_id": self.write_id,
                 "result": "allow"})))
        return reply(shapes.send_events_response(records))

    def handle(self, request: Any) -> Any:
        if request.url.path.endswith("/stream"):
            return self.stream()
        if request.method == "GET" and request.url.path.endswith("/events"):
            assert parse_qs(urlsplit(str(request.url)).query)["limit"] == ["1000"]
            return reply(shapes.list_page(self.log))
        if request.method == "GET":  # the session itself (newer runners read its status)
            return reply({**new_session()[1], "id": "sesn_1", "status": "running"})
        return self.send(request)


def test_the_sdk_tool_runner_answers_our_tool_calls(tmp_path, monkeypatch):
    """The SDK's session tool runner over a scripted log: it runs the custom tool at once,
    holds the always_ask `write` until a `user.tool_confirmation` shows up in the log, and
    posts each result as its own event; `session.status_terminated` stops it."""
    import anyio
    from anthropic.lib.tools import beta_async_tool
    from anthropic.lib.tools.agent_toolset import (
        AgentToolContext,
        beta_agent_toolset_20260401,
    )

    log: list[JSON] = [shapes.status_running()]
    custom = shapes.agent_custom_tool_use("lookup", {"word": "x"})
    write = shapes.agent_tool_use("write", {"file_path": "out.txt", "content": "hi"},
                                  policy="always_ask")
    log += [custom, write, shapes.status_idle("requires_action",
                                              event_ids=[custom["id"], write["id"]])]
    session = _ToolRunnerSession(log, write["id"])
    posted = session.posted

    @beta_async_tool(name="lookup")
    async def lookup(word: str) -> str:
        """Look a word up."""
        return f"meaning of {word}"

    async def run() -> list[Any]:
        client = anthropic.AsyncAnthropic(
            api_key="k", base_url="http://wisp.test", max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(session.handle)))
        async with AgentToolContext(workdir=str(tmp_path)) as ctx:
            tools = [*beta_agent_toolset_20260401(ctx), lookup]
            with anyio.fail_after(30):
                return [call async for call in client.beta.sessions.events.tool_runner(
                    "sesn_1", tools=tools, max_idle=None)]

    calls = anyio.run(run)
    assert [(c.name, c.posted, c.confirmation) for c in calls] == [
        ("lookup", True, None), ("write", True, "allow")]
    assert [(e["type"], e.get("custom_tool_use_id") or e.get("tool_use_id")) for e in posted] == [
        ("user.custom_tool_result", custom["id"]), ("user.tool_result", write["id"])]
    assert posted[0]["content"] == [{"type": "text", "text": "meaning of x"}]
    assert (tmp_path / "out.txt").read_text() == "hi"


def test_a_frame_without_an_event_line_is_lost_to_the_sdk(api):
    # Why sse_frame always writes `event:`: the SDK skips frames that lack it.
    client, routes, _ = api
    bare = b"data: " + json.dumps(shapes.status_running()).encode() + b"\n\n"
    routes[("GET", "/v1/sessions/sesn_1/events/stream")] = lambda r: httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, content=bare)
    assert list(client.beta.sessions.events.stream("sesn_1")) == []


def test_errors_map_to_sdk_exceptions(api):
    client, routes, _ = api
    routes[("GET", "/v1/agents/agent_x")] = lambda r: reply(
        shapes.error_body(404, "no agent agent_x", request_id="req_1"), 404)
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.beta.agents.retrieve("agent_x")
    assert caught.value.api_message == "no agent agent_x"
    assert caught.value.type == "not_found_error"
    routes[("POST", "/v1/environments/env_x")] = lambda r: reply(
        shapes.error_body(400, "archived", error_code="environment_archived"), 400)
    with pytest.raises(BetaEnvironmentArchivedError) as archived:
        client.beta.environments.update("env_x", name="n")
    assert archived.value.error_code == "environment_archived"
    routes[("GET", "/v1/sessions/sesn_1/events/stream")] = lambda r: httpx2.Response(
        200, headers={"content-type": "text/event-stream"},
        content=shapes.sse_error(400, "gone"))
    # Mid-stream the HTTP status was 200: the SDK raises the generic APIStatusError (which
    # its tool runner treats as a reason to reconnect, not to stop); the type is the body's.
    with pytest.raises(anthropic.APIStatusError) as streamed:
        list(client.beta.sessions.events.stream("sesn_1"))
    assert type(streamed.value) is anthropic.APIStatusError
    assert streamed.value.type == "invalid_request_error"


# Query strings ------------------------------------------------------------------------------

def test_events_query_reads_what_the_sdk_sends(api):
    client, routes, seen = api
    routes[("GET", "/v1/sessions/sesn_1/events")] = lambda r: reply(shapes.list_page([]))
    moment = dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC)
    list(client.beta.sessions.events.list(
        "sesn_1", limit=5, order="desc", types=["agent.message", "session.status_idle"],
        created_at_gt=moment, created_at_gte=moment, created_at_lt=moment,
        created_at_lte="2026-01-02T04:04:05.5+01:00"))
    args = shapes.events_query(parse_qs(urlsplit(str(seen[0].url)).query))
    assert args["limit"] == 5 and args["order"] == "desc" and args["page"] is None
    assert args["types"] == ["agent.message", "session.status_idle"]
    # Stored stamps have milliseconds: bounds land on that grid without changing the answer.
    assert args["created_gt"] == "2026-01-02T03:04:05.123Z"
    assert args["created_gte"] == "2026-01-02T03:04:05.124Z"
    assert args["created_lt"] == "2026-01-02T03:04:05.124Z"
    assert args["created_lte"] == "2026-01-02T03:04:05.500Z"


def test_query_defaults_and_errors():
    assert shapes.events_query({}) == {"limit": 1000, "page": None, "order": "asc",
                                       "types": None}
    assert shapes.resources_query({"limit": ["500"]})["limit"] == 100
    assert shapes.sessions_query({"agent_version": ["2"]})["agent_version"] == 2
    assert shapes.instant("2026-01-01T23:59:59.9999Z", "t", round_up=True) == \
        "2026-01-02T00:00:00.000Z"
    for query, field in (({"limit": ["0"]}, "limit"), ({"types[]": ["agent.nope"]}, "types"),
                         ({"created_at[gt]": ["yesterday"]}, "created_at[gt]"),
                         ({"order": ["up"]}, "order")):
        with pytest.raises(ShapeError) as caught:
            shapes.events_query(query)
        assert caught.value.path == field


def test_event_types_match_the_sdk():
    literal = EventListParams.__annotations__["types"]
    sdk_types = set(pydantic.TypeAdapter(literal).json_schema()["items"]["enum"])
    assert set(shapes.EVENT_TYPES) == sdk_types


# Validation ---------------------------------------------------------------------------------

AGENT = {"name": "a", "model": "m"}
BAD_BODIES: list[tuple[Callable[[Any], Any], Any, str, str]] = [
    (shapes.agent_create, [], "body", "expected an object"),
    (shapes.agent_create, {"model": "m"}, "name", "required"),
    (shapes.agent_create, {"name": "a", "model": 5}, "model", "expected a model id"),
    (shapes.agent_create, {**AGENT, "model": {"id": "m", "effort": "huge"}}, "model.effort",
     'expected one of "low"'),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "nope"}]}, "tools[0].type",
     'expected one of "agent_toolset_20260401", "mcp_toolset", "custom"'),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "agent_toolset_20260401", "configs": [
        {"name": "bash"}, {"name": "read", "permission_policy": {"type": "sometimes"}}]}]},
     "tools[0].configs[1].permission_policy.type", "expected one of"),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "agent_toolset_20260401", "configs": [
        {"name": "bash", "enabled": "yes"}]}]}, "tools[0].configs[0].enabled",
     "expected a boolean"),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "custom", "name": "bad name",
                                               "description": "d",
                                               "input_schema": {"type": "object"}}]},
     "tools[0].name", "letters, digits"),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "custom", "name": "x",
                                               "description": "d", "input_schema": {}}]},
     "tools[0].input_schema.type", 'expected one of "object"'),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "mcp_toolset",
                                               "mcp_server_name": "gh"}]},
     "tools[0].mcp_server_name", "no mcp_servers entry"),
    (shapes.agent_create, {**AGENT, "mcp_servers": [{"type": "url", "name": "gh",
                                                     "url": "u"}]},
     "mcp_servers[0].name", "not used"),
    (shapes.agent_create, {**AGENT, "tools": [{"type": "custom", "name": "x",
                                               "description": "d",
                                               "input_schema": {"type": "object"}}] * 2},
     "tools[1]", "defined twice"),
    (shapes.agent_create, {**AGENT, "metadata": {"k": 1}}, "metadata.k", "expected a string"),
    (shapes.agent_create, {**AGENT, "multiagent": {"type": "coordinator"}},
     "multiagent.agents", "required"),
    (shapes.agent_create, {**AGENT, "multiagent": {"type": "coordinator", "agents": [
        {"type": "advisor"}]}}, "multiagent.agents[0].type", "not supported"),
    (shapes.agent_create, {**AGENT, "multiagent": {"type": "multiagent_20261001"}},
     "multiagent.type", 'expected one of "coordinator"'),
    (shapes.agent_create, {**AGENT, "multiagent": {"type": "coordinator", "agents": []}},
     "multiagent.agents", "1 to 20"),
    (shapes.agent_update, {"version": 0}, "version", "at least 1"),
    (shapes.environment_create, {"name": "e", "config": {"type": "cloud", "networking": {
        "type": "open"}}}, "config.networking.type", 'expected one of "unrestricted"'),
    (shapes.environment_create, {"name": "e", "config": {"type": "cloud", "packages": {
        "pip": "requests"}}}, "config.packages.pip", "expected an array"),
    (shapes.session_create, {"agent": "a"}, "environment_id", "required"),
    (shapes.session_create, {"agent": {"type": "agent"}, "environment_id": "e"}, "agent.id",
     "required"),
    (shapes.session_create, {"agent": 1, "environment_id": "e"}, "agent",
     "expected an object"),
    (shapes.session_create, {"agent": "a", "environment_id": "e",
                             "initial_events": [{"type": "user.interrupt"}]},
     "initial_events[0].type", 'expected one of "user.message", "user.define_outcome"'),
    (shapes.session_create, {"agent": "a", "environment_id": "e", "budget": {
        "type": "limit", "max_list_cost": {"amount": "lots", "currency": "USD"}}},
     "budget.max_list_cost.amount", "decimal"),
    (shapes.session_update, {"vault_ids": ["vlt_1"]}, "vault_ids", "cannot be changed"),
    (shapes.send_events, {"events": []}, "events", "must not be empty"),
    (shapes.send_events, {"events": [{"type": "user.message", "content": [
        {"type": "image", "source": {"type": "ftp"}}]}]},
     "events[0].content[0].source.type", 'expected one of "base64", "url", "file"'),
    (shapes.send_events, {"events": [{"type": "user.tool_confirmation", "tool_use_id": "t",
                                      "result": "maybe"}]},
     "events[0].result", 'expected one of "allow", "deny"'),
    (shapes.send_events, {"events": [{"type": "user.custom_tool_result"}]},
     "events[0].custom_tool_use_id", "required"),
    (shapes.send_events, {"events": [{"type": "agent.message", "content": []}]},
     "events[0].type", 'expected one of "user.message"'),
    (shapes.send_events, {"events": [{"type": "user.define_outcome", "description": "d",
                                      "rubric": {"type": "text", "content": "c"},
                                      "max_iterations": 99}]},
     "events[0].max_iterations", "at most 20"),
]


@pytest.mark.parametrize(("parse", "body", "path", "message"), BAD_BODIES,
                         ids=[f"{p.__name__}-{path}" for p, _, path, _ in BAD_BODIES])
def test_a_bad_field_is_named(parse, body, path, message):
    with pytest.raises(ShapeError) as caught:
        parse(body)
    assert caught.value.path == path
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{path}: ")


def test_unknown_fields_are_ignored():
    fields = shapes.agent_create({**FULL_AGENT, "surprise": 1,
                                  "model": {"id": "m", "future": True},
                                  "skills": [{"type": "custom", "skill_id": "s", "x": 1}]})
    assert "surprise" not in fields and "future" not in fields["model"]
    assert fields["skills"] == [{"type": "custom", "skill_id": "s", "version": "latest"}]
    env = shapes.environment_create({"name": "e", "config": {"type": "self_hosted", "x": 1},
                                     "y": 2})
    assert env["config"] == {"type": "self_hosted"} and "y" not in env
    assert "z" not in shapes.session_create({"agent": "a", "environment_id": "e", "z": 1})


def test_ids_and_stamps():
    ids = {shapes.new_id("sevt") for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 29 and i[5:].isalnum() for i in ids)
    stamp = shapes.timestamp()
    assert stamp.endswith("Z") and len(stamp) == len(NOW)

