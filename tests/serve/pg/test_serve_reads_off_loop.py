"""A turn's store reads are off `wisp serve`'s event loop (issue 29, item 5): opening a
session's runtime (`SessionDriver.opened`: its conversation, its memory and delegation
tools), an outcome's read of its `user.define_outcome` before grading (`outcomes`), a
delegate thread's opening and its skills (`threads`, `skill_mount.offer`), and the
vault token an MCP tool call is made with (`session_mcp`). In a
process that is API and worker at once (`--role all`), such a read that waits on a lock
must not stall the API: while it is seen waiting (`pg_stat_activity`), a request is
still answered. Made on the event loop, the whole process waited with it.

These reads are plain `SELECT`s, which only a table lock holds back
(`tests/serve/pg/locks.py`). A table lock holds back every other statement on the table
too, so each case first brings the turn to the read it is about (a row lock, or another
table lock, as the gate), and only then locks the table the read needs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg

from tests.serve.harness import (
    Served,
    agent_texts,
    cloud_setup,
    delegated_once,
    idle_end_turn,
    user_message,
    wait_for,
)
from tests.serve.outcome_scenarios import evaluations, outcome, verdict
from tests.serve.pg.locks import (
    ANSWER_WITHIN_S,
    answered_without_store,
    answers_while_waiting,
    asking_for_table,
    holding,
    holding_table,
    holding_thread,
    waiting,
)
from tests.serve.skill_scenarios import NOTES
from tests.serve.vault_scenarios import ENV, TOKEN, guarded_mcp_server, mcp_agent
from tests.waits import wait_until
from wisp.testing import ScriptedServer, reply

CONVERSATION_READ = "SELECT message FROM conversation"
EVENTS_READ = "SELECT e.first_seq"  # `Store.events`
GET = "SELECT doc FROM resources WHERE kind = $1 AND owner = $2 AND id = $3"  # `Store.get`
OWNER_OF = "SELECT owner FROM resources WHERE kind = $1 AND id = $2"  # `Store.owner_of`


def test_opening_a_sessions_runtime_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The conversation is locked, so the turn's read of it, opening the runtime,
    waits; once the lock goes the turn runs."""
    server.script(reply.text("hello"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with holding(dsn, "LOCK TABLE wisp.conversation IN ACCESS EXCLUSIVE MODE") as (
                admin, release):
            client.beta.sessions.events.send(session.id, events=[user_message("hi")])
            answers_while_waiting(served, admin, CONVERSATION_READ, agent.id)
            release()
        events = wait_for(client, session.id, idle_end_turn)
        assert agent_texts(events) == ["hello"]
    finally:
        served.stop()


def _logged(admin: psycopg.Connection[Any], session_id: str, kind: str) -> bool:
    row = admin.execute("SELECT count(*) FROM wisp.log WHERE session_id = %s AND type = %s",
                        (session_id, kind)).fetchone()
    return bool(row and row[0])


def _evaluation(client: Any, session_id: str) -> str | None:
    states = client.beta.sessions.retrieve(session_id).outcome_evaluations
    return states[0].result if states else None


def test_an_outcomes_read_of_its_event_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """Before grading, the outcome's `user.define_outcome` is read from the log. The
    gate: `resources` is locked while the agent answers, so once the answer is stored
    the outcome's look at the session document (just before the read) waits. Then
    `latest` is locked and `resources` let go: the read waits on `latest`."""
    answer = threading.Event()

    def answered_when_let(body: dict[str, Any]) -> reply.Reply:
        answer.wait(ANSWER_WITHIN_S * 3)
        return reply.text("Crisp leaves falling")

    server.script(reply.dynamic(answered_when_let), verdict("satisfied", "Three lines."))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[outcome()])
        # The agent is asked, and the outcome's `running` (a session write) is stored.
        wait_until(lambda: server.requests and _evaluation(client, session.id) == "running",
                   "the agent's model request")
        with holding_table(dsn, "resources") as let_resources_go, \
                psycopg.connect(dsn, autocommit=True) as admin:
            answer.set()
            wait_until(lambda: _logged(admin, session.id, "span.model_request_end"),
                       "the agent's answer to be stored")
            with asking_for_table(dsn, "latest") as let_latest_go:
                let_resources_go()
                answers_while_waiting(served, admin, EVENTS_READ, agent.id)
                let_latest_go()
        events = wait_for(client, session.id, idle_end_turn)
        assert evaluations(events) == [(0, "satisfied")]
        assert agent_texts(events) == ["Crisp leaves falling"]
    finally:
        answer.set()
        served.stop()


def test_a_delegates_opening_and_skills_waiting_on_locks_do_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The second delegation to a thread: its status write (`running`) is the gate (the
    thread's row is locked). Meanwhile the conversation is locked, then the thread's row
    let go: the delegate's runtime opening waits on its conversation. Then `resources`
    is locked and the conversation let go: reading the delegate's skills waits."""
    delegate = reply.tool_use("delegate_to_agent", {"agent": "researcher", "message": "X?"})
    server.script(delegate, reply.text("X is 42"), reply.text("42"),
                  delegate, reply.text("still 42"), reply.text("42 again"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        skill = client.beta.skills.create(files=NOTES)
        lead_id, session_id, thread_id = delegated_once(
            client, helper_skills=[{"type": "custom", "skill_id": skill.id}])
        with holding_thread(dsn, session_id, thread_id) as (admin, let_thread_go):
            client.beta.sessions.events.send(session_id, events=[user_message("again")])
            wait_until(lambda: waiting(admin, "FOR UPDATE"), "the thread's status write")
            with holding_table(dsn, "conversation") as let_conversation_go:
                let_thread_go()
                answers_while_waiting(served, admin, CONVERSATION_READ, lead_id)
                with asking_for_table(dsn, "resources") as let_resources_go:
                    let_conversation_go()
                    answered_without_store(served, admin, GET)
                    let_resources_go()
        events = wait_for(client, session_id, lambda es: sum(
            e["type"] == "session.status_idle" for e in es) >= 2)
        assert agent_texts(events) == ["42", "42 again"]
        # The delegate had its skill (the Skill tool over it) in its second turn too.
        thread_request = server.requests[4].body
        assert "pdf-notes" in str(thread_request.get("tools"))
    finally:
        served.stop()


def test_a_delegate_interrupted_while_it_opens_leaves_its_thread_idle(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The delegate's opening waits on the locked conversation (as above) when the
    coordinator is interrupted: the delegation ends, and its thread is not left marked
    `running` (the opening awaits now, so the interrupt can come in there)."""
    delegate = reply.tool_use("delegate_to_agent", {"agent": "researcher", "message": "X?"})
    server.script(delegate, reply.text("X is 42"), reply.text("42"), delegate)
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        _, session_id, thread_id = delegated_once(client)
        with holding_thread(dsn, session_id, thread_id) as (admin, let_thread_go):
            client.beta.sessions.events.send(session_id, events=[user_message("again")])
            wait_until(lambda: waiting(admin, "FOR UPDATE"), "the thread's status write")
            with holding_table(dsn, "conversation") as let_conversation_go:
                let_thread_go()
                wait_until(lambda: waiting(admin, CONVERSATION_READ), "the delegate to open")
                client.beta.sessions.events.send(session_id,
                                                 events=[{"type": "user.interrupt"}])
                wait_for(client, session_id, lambda es: any(
                    e["type"] == "user.interrupt" and e["processed_at"] for e in es))
                let_conversation_go()
        wait_for(client, session_id, lambda es: sum(
            e["type"] == "session.status_idle" for e in es) >= 2)
        wait_until(lambda: client.beta.sessions.threads.retrieve(
            thread_id, session_id=session_id).status == "idle", "the thread to be idle")
        events = [e.model_dump() for e in client.beta.sessions.events.list(session_id)]
        assert agent_texts(events) == ["42"]  # the second delegation gave no answer
    finally:
        served.stop()


def _model_requests(server: ScriptedServer) -> int:
    return sum(r.path.partition("?")[0].endswith("/v1/messages") for r in server.requests)


def test_an_mcp_calls_token_read_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """Before each call of an MCP tool, the token is read from the session's vault. The
    gate: the model's answer (the call) is held while `resources` is locked; then the
    call's read of the session's owner waits."""
    call = threading.Event()

    def called_when_let(body: dict[str, Any]) -> reply.Reply:
        call.wait(ANSWER_WITHIN_S * 3)
        return reply.tool_use("mcp__calc__add", {"a": 2, "b": 3})

    server.script(reply.dynamic(called_when_let), reply.text("five"))
    served = Served(tmp_path, server, "--role", "all", store=dsn, env=ENV).start()
    try:
        with guarded_mcp_server() as mcp:
            client = served.client()
            url = mcp.url("/mcp")
            vault = client.beta.vaults.create(display_name="mcp")
            client.beta.vaults.credentials.create(vault.id, auth={
                "type": "static_bearer", "mcp_server_url": url, "token": TOKEN})
            agent, environment = mcp_agent(client, url)
            session = client.beta.sessions.create(
                agent=agent.id, environment_id=environment.id, vault_ids=[vault.id])
            client.beta.sessions.events.send(session.id, events=[user_message("add")])
            wait_until(lambda: _model_requests(server) == 1, "the agent's model request")
            with holding_table(dsn, "resources") as let_resources_go, \
                    psycopg.connect(dsn, autocommit=True) as admin:
                call.set()
                answered_without_store(served, admin, OWNER_OF)
                let_resources_go()
            events = wait_for(client, session.id, idle_end_turn)
        [result] = [e for e in events if e["type"] == "agent.mcp_tool_result"]
        assert result["is_error"] is False and "5" in str(result["content"])
        assert agent_texts(events) == ["five"]
    finally:
        call.set()
        served.stop()
