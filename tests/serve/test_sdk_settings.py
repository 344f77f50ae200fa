"""Nothing accepted and then ignored, through the official `anthropic` SDK: settings wisp
does not act on are a 400 naming them; budgets stop a session; `web_fetch` is offered
and honours its domains; `session.updated` is logged; list filters are honoured or
refused."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.serve.harness import (
    anthropic,
    cloud_setup,
    serving,
    user_message,
    wait_for,
)
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
BUDGET = {"type": "limit", "max_list_cost": {"amount": "0.000001", "currency": "USD"}}


def refused(call: Callable[[], object], *names: str) -> str:
    """The call is a 400 whose message names every one of `names`."""
    try:
        call()
    except anthropic.BadRequestError as exc:
        assert exc.status_code == 400
        for name in names:
            assert name in exc.message, (name, exc.message)
        return str(exc.message)
    raise AssertionError(f"accepted: {names}")


def idled(reason: str, count: int = 1) -> Callable[[list[JSON]], bool]:
    def done(events: list[JSON]) -> bool:
        return sum(e["type"] == "session.status_idle"
                   and e["stop_reason"]["type"] == reason for e in events) >= count
    return done


def test_settings_wisp_would_ignore_are_refused_naming_the_field(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        agents = client.beta.agents
        refused(lambda: agents.create(name="s", model="claude-sonnet-4-5", skills=[
            {"type": "anthropic", "skill_id": "xlsx"}]), "skills")
        refused(lambda: agents.create(name="w", model="claude-sonnet-4-5", tools=[{
            "type": "agent_toolset_20260401",
            "configs": [{"name": "web_search", "enabled": True}]}]),
            "tools[0].configs[0]", "web_search", "search backend")
        refused(lambda: agents.create(name="g", model={"id": "claude-sonnet-4-5",
                                                       "inference_geo": "eu"}),
                "model.inference_geo")
        agent, environment = cloud_setup(client)
        refused(lambda: agents.update(agent.id, version=agent.version, skills=[
            {"type": "custom", "skill_id": "sk_1"}]), "skills")
        assert agents.retrieve(agent.id).version == agent.version  # nothing was stored
        sessions = client.beta.sessions
        refused(lambda: sessions.create(agent=agent.id, environment_id=environment.id,
                                        vault_ids=["vlt_1"]), "vault_ids[0]", "not found")
        outcome = {"type": "user.define_outcome", "description": "a haiku",
                   "rubric": {"type": "text", "content": "5-7-5"}}
        refused(lambda: sessions.create(agent=agent.id, environment_id=environment.id,
                                        initial_events=[outcome]),
                "initial_events[0]", "define_outcome")
        session = sessions.create(agent=agent.id, environment_id=environment.id)
        refused(lambda: sessions.events.send(session.id, events=[outcome]),
                "events[0]", "define_outcome")
        refused(lambda: sessions.events.send(session.id, events=[{
            "type": "user.tool_result", "tool_use_id": "sevt_x", "content": []}]),
            "user.tool_result", "self_hosted")
        listed = [e.type for e in sessions.events.list(session.id)]
    assert listed == []  # the refused events were never logged


def test_list_filters_are_honoured_or_refused(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        first, environment = cloud_setup(client)
        second = client.beta.agents.create(name="second", model="claude-sonnet-4-5")
        later = datetime.fromisoformat(str(second.created_at)) - timedelta(microseconds=1)
        assert [a.id for a in client.beta.agents.list(created_at_gte=later)] == [second.id]
        assert [a.id for a in client.beta.agents.list(created_at_lte=later)] == [first.id]
        v1 = client.beta.sessions.create(agent=first.id, environment_id=environment.id)
        client.beta.agents.update(first.id, version=1, system="be brief")
        v2 = client.beta.sessions.create(agent=first.id, environment_id=environment.id)
        by_version = client.beta.sessions.list(agent_id=first.id, agent_version=1)
        assert [s.id for s in by_version] == [v1.id]
        assert [s.id for s in client.beta.sessions.list(agent_version=2)] == [v2.id]
        assert list(client.beta.sessions.list(deployment_id="dep_none")) == []
        assert list(client.beta.sessions.list(memory_store_id="memstore_none")) == []
        cut = datetime.fromisoformat(str(v2.created_at).replace("Z", "+00:00"))
        newer = client.beta.sessions.list(created_at_gte=cut)
        assert [s.id for s in newer] == [v2.id]
        older = client.beta.sessions.list(created_at_lt=cut.astimezone(UTC))
        assert [s.id for s in older] == [v1.id]
        refused(lambda: client.beta.sessions.list(workspace_id="wrkspc_1"), "workspace_id")
        refused(lambda: client.beta.agents.list(extra_query={"name": "x"}), "name")
        refused(lambda: client.beta.sessions.events.list(v1.id, workspace_id="w"),
                "workspace_id")


def test_a_budget_stops_the_session_and_its_cost_is_reported(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.tool_use("bash", {"command": "echo one > one.txt"}),
                  reply.text("never asked for"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              budget=BUDGET)
        client.beta.sessions.events.send(session.id, events=[user_message("go")])
        events = wait_for(client, session.id, idled("budget_reached"))
        assert len(server.requests) == 1  # the first request's cost used the budget up
        # Its tool call is answered as not run (no model request may follow it).
        [unrun] = [e for e in events if e["type"] == "agent.tool_result"]
        assert unrun["is_error"] and "budget" in unrun["content"][0]["text"]
        usage = [e for e in events if e["type"] == "session.usage"][-1]
        cost = usage["usage"]["list_cost"]
        assert cost["currency"] == "USD" and float(cost["amount"]) > 0.000001
        assert usage["budget"] == BUDGET
        retrieved = client.beta.sessions.retrieve(session.id)
        assert retrieved.usage.list_cost.amount == cost["amount"]
        client.beta.sessions.events.send(session.id, events=[user_message("again")])
        events = wait_for(client, session.id, idled("budget_reached", 2))
        assert len(server.requests) == 1  # over budget: no model request at all
        assert all(e["processed_at"] is not None for e in events
                   if e["type"] == "user.message")
        raised = client.beta.sessions.update(session.id, budget={
            "type": "limit", "max_list_cost": {"amount": "100", "currency": "USD"}})
        assert raised.budget.max_list_cost.amount == "100"
        client.beta.sessions.events.send(session.id, events=[user_message("go on")])
        wait_for(client, session.id, idled("end_turn"))
    assert len(server.requests) == 2
    assert not list(tmp_path.glob("serve/workspaces/*/one.txt"))
    sent = server.requests[1].body["messages"]
    results = [b for m in sent if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert [r["is_error"] for r in results] == [True]  # the history stayed valid


def test_session_updated_is_logged_with_the_changed_fields(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              title="first")
        with client.beta.sessions.events.stream(session.id) as stream:
            client.beta.sessions.update(session.id, title="second", metadata={"k": "v"})
            streamed = next(iter(stream))
        client.beta.sessions.update(session.id, title="second")  # no change: no event
        client.beta.sessions.update(session.id, budget=BUDGET)
        listed = [e for e in client.beta.sessions.events.list(session.id)]
    assert streamed.type == "session.updated"
    assert (streamed.title, streamed.metadata) == ("second", {"k": "v"})
    assert [e.type for e in listed] == ["session.updated", "session.updated"]
    assert listed[1].budget is not None and listed[1].title is None


@contextmanager
def page_server(body: str) -> Iterator[str]:
    """A web page on 127.0.0.1; yields its base URL."""
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_web_fetch_is_offered_and_honours_the_agents_domains(
        tmp_path: Path, server: ScriptedServer) -> None:
    config = tmp_path / "config"
    config.mkdir()
    # The operator lets WebFetch reach this internal host (wisp refuses internal
    # addresses otherwise).
    (config / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["WebFetch(domain:127.0.0.1)"]}}))
    with page_server("the page says 42") as url:
        server.script(reply.tool_use("web_fetch", {"url": f"{url}/answer"}),
                      reply.text("42"),
                      reply.tool_use("web_fetch", {"url": f"{url}/answer"}),
                      reply.text("blocked"))
        with serving(tmp_path, server) as served:
            client = served.client()
            agent, environment = cloud_setup(client)
            blocked = client.beta.agents.create(name="b", model="claude-sonnet-4-5", tools=[{
                "type": "agent_toolset_20260401",
                "configs": [{"name": "web_fetch", "blocked_domains": ["127.0.0.1"]}]}])
            for chosen in (agent, blocked):
                session = client.beta.sessions.create(agent=chosen.id,
                                                      environment_id=environment.id)
                client.beta.sessions.events.send(session.id, events=[user_message("fetch")])
                events = wait_for(client, session.id, idled("end_turn"))
                [result] = [e for e in events if e["type"] == "agent.tool_result"]
                if chosen is agent:
                    assert result["is_error"] is False
                    assert "the page says 42" in result["content"][0]["text"]
                else:
                    assert result["is_error"] is True
                    assert "blocked" in result["content"][0]["text"]
    offered = {t["name"] for t in server.requests[0].body["tools"]}
    assert "web_fetch" in offered and "web_search" not in offered
