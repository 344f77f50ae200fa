"""A turn's store calls, and the durable executor's heartbeat, are off `wisp serve`'s
event loop (issue 29): in a process that is API and worker at once (`--role all`), a
store call that waits on a lock another connection holds must not stall the API. The
cases: a turn's mount of the session's files (`turn_setup`, its record of what is
mounted), the memory tool's write (`memory_tool`), the delegation tool's thread status
write (`threads`), and the executor's lease heartbeat (`durable.turns`). While the call
is seen waiting (`pg_stat_activity`), `GET /v1/agents` must be answered; with the call
on the event loop the whole process waited with it. Once the lock goes, the turn ends
as it would have."""

from __future__ import annotations

from pathlib import Path

from tests.serve.harness import (
    Served,
    agent_texts,
    cloud_setup,
    delegated_once,
    idle_end_turn,
    user_message,
    wait_for,
)
from tests.serve.pg.locks import answers_while_waiting, holding, holding_thread, waiting
from wisp.testing import ScriptedServer, reply


def test_a_turns_mount_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """Another transaction inserts the session's `session_mounts` record first, so the
    turn's own insert of it waits (until that transaction rolls back)."""
    server.script(reply.tool_use("read", {"file_path": "data/input.csv"}),
                  reply.text("read it"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        upload = client.beta.files.upload(file=("input.csv", b"city,temp\nOslo,7\n"))
        session = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id,
            resources=[{"type": "file", "file_id": upload.id,
                        "mount_path": "/data/input.csv"}])
        with holding(dsn, "INSERT INTO wisp.resources (kind, id, owner, archived, doc) "
                          "VALUES ('session_mounts', %s, 'someone', false, '{}')",
                     (session.id,)) as (admin, release):
            client.beta.sessions.events.send(session.id, events=[user_message("read")])
            answers_while_waiting(served, admin, "INSERT INTO resources", agent.id)
            release()
        events = wait_for(client, session.id, idle_end_turn)
        [result] = [e for e in events if e["type"] == "agent.tool_result"]
        assert "Oslo,7" in str(result["content"])  # mounted once the lock went
    finally:
        served.stop()


def test_a_memory_tool_write_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The memory the agent edits is locked (`SELECT … FOR UPDATE`) by another
    transaction, so the tool's write of it waits."""
    root = "/mnt/memory/notes"
    server.script(reply.tool_use("memory", {"command": "str_replace", "path": f"{root}/a.md",
                                            "old_str": "one", "new_str": "two"}),
                  reply.text("edited"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        store = client.beta.memory_stores.create(name="notes")
        memory = client.beta.memory_stores.memories.create(store.id, path="/a.md",
                                                           content="step one")
        session = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id,
            resources=[{"type": "memory_store", "memory_store_id": store.id}])
        with holding(dsn, "SELECT id FROM wisp.resources WHERE kind = %s AND id = %s "
                          "FOR UPDATE", (f"memory:{store.id}", memory.id)) as (admin, release):
            client.beta.sessions.events.send(session.id, events=[user_message("edit")])
            answers_while_waiting(served, admin, "FOR UPDATE", agent.id)
            release()
        events = wait_for(client, session.id, idle_end_turn)
        [result] = [e for e in events if e["type"] == "agent.tool_result"]
        assert not result.get("is_error"), result
        edited = client.beta.memory_stores.memories.retrieve(memory.id,
                                                             memory_store_id=store.id)
        assert edited.content == "step two"
    finally:
        served.stop()


def test_the_executor_heartbeat_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The executor's lease row is locked, so its next heartbeat (a lease renewal)
    waits; a turn sent meanwhile still runs to its end."""
    server.script(reply.text("hello"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        with holding(dsn, "SELECT session_id FROM wisp.leases WHERE session_id LIKE "
                          "'executor:%%' FOR UPDATE", ()) as (admin, _):
            answers_while_waiting(served, admin, "leases", agent.id)
            client.beta.sessions.events.send(session.id, events=[user_message("hi")])
            events = wait_for(client, session.id, idle_end_turn)
            assert agent_texts(events) == ["hello"]
            assert waiting(admin, "leases")  # the turn ran while the heartbeat waited
    finally:
        served.stop()


def test_a_thread_status_write_waiting_on_a_lock_does_not_stall_the_api(
        tmp_path: Path, server: ScriptedServer, dsn: str) -> None:
    """The coordinator's thread (made by a first delegation) is locked, so the second
    delegation's status write (`running`) waits; once the lock goes the delegate runs."""
    delegate = reply.tool_use("delegate_to_agent", {"agent": "researcher", "message": "X?"})
    server.script(delegate, reply.text("X is 42"), reply.text("42"),
                  delegate, reply.text("still 42"), reply.text("42 again"))
    served = Served(tmp_path, server, "--role", "all", store=dsn).start()
    try:
        client = served.client()
        lead_id, session_id, thread_id = delegated_once(client)
        with holding_thread(dsn, session_id, thread_id) as (admin, release):
            client.beta.sessions.events.send(session_id, events=[user_message("again")])
            answers_while_waiting(served, admin, "FOR UPDATE", lead_id)
            release()
        events = wait_for(client, session_id, lambda es: sum(
            e["type"] == "session.status_idle" for e in es) >= 2)
        assert agent_texts(events) == ["42", "42 again"]
        assert client.beta.sessions.threads.retrieve(thread_id,
                                                     session_id=session_id).status == "idle"
    finally:
        served.stop()
