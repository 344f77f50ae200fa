"""Scale-out on PostgreSQL: 2 API processes and 2 worker processes (`wisp serve --role`),
turns as DBOS durable workflows, driven by the official `anthropic` SDK. One worker is
killed (`kill -9`) while turns are under way on it; every session must still complete,
each exactly once."""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.serve.harness import Served, anthropic, cloud_setup, user_message
from wisp.serve import shapes
from wisp.serve.store.postgres import PostgresStore
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import MessageReply, Reply
from wisp.testing.reply import Served as ServedReply

pytest.importorskip("dbos", reason="DBOS Transact is not installed (pip install dbos)")

JSON = dict[str, Any]
SESSIONS = 20
LOOKUP = {"type": "custom", "name": "lookup", "description": "Look a key up",
          "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}}}


class LookupThenAnswer(Reply):
    """Per conversation, not per arrival order (20 sessions share the server): a prompt
    gets a `lookup` call, a tool result gets `done: <result>`. Slow enough (~0.6 s a
    reply) for a worker to be killed with model calls in flight."""

    def render(self, body: JSON, body_size: int) -> ServedReply:
        last = body["messages"][-1]
        content = last["content"] if isinstance(last["content"], list) else [
            {"type": "text", "text": last["content"]}]
        results = [b for b in content if b.get("type") == "tool_result"]
        if results:
            answer = results[0]["content"]
            text = answer if isinstance(answer, str) else "".join(
                b.get("text", "") for b in answer)
            reply = MessageReply(({"type": "text", "text": f"done: {text}"},), chunks=6,
                                 delay=0.06)
        else:
            prompt = next(b["text"] for b in content if b.get("type") == "text"
                          and b["text"].startswith("key-"))
            reply = MessageReply(({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex}",
                                   "name": "lookup", "input": {"key": prompt}},),
                                 "tool_use", chunks=6, delay=0.06)
        return reply.render(body, body_size)


class Deployment:
    """The processes of one PostgreSQL deployment, the scripted model they call, and a
    store to look into the database with; every process is stopped at the end."""

    def __init__(self, tmp: Path, dsn: str, model_reply: Reply) -> None:
        self.tmp = tmp
        self.dsn = dsn
        self.model = ScriptedServer(default=model_reply)
        self.store = PostgresStore(dsn)
        self.procs: list[Served] = []

    def start(self, role: str) -> Served:
        """A `wisp serve --role ROLE` process, with a folder of its own."""
        proc = Served(self.tmp / f"{role}{len(self.procs)}", self.model, "--role", role,
                      store=self.dsn).start()
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Deployment:
        return self

    def __exit__(self, *_exc: object) -> None:
        for proc in self.procs:
            proc.stop()
        self.model.close()
        self.store.close()


def _answer_lookups(client: Any, session_ids: list[str], stop: threading.Event,
                    answered: dict[str, int]) -> None:
    """The client's side: answers each `lookup` call, once."""
    seen: set[str] = set()
    while not stop.is_set():
        for session_id in session_ids:
            for event in client.beta.sessions.events.list(session_id, limit=100):
                if event.type != "agent.custom_tool_use" or event.id in seen:
                    continue
                seen.add(event.id)
                answered[session_id] = answered.get(session_id, 0) + 1
                client.beta.sessions.events.send(session_id, events=[{
                    "type": "user.custom_tool_result", "custom_tool_use_id": event.id,
                    "content": [{"type": "text", "text": "value-of-" + event.input["key"]}]}])
        time.sleep(0.05)


def _lease_holders(store: PostgresStore) -> dict[str, str]:
    return {s: h for s, h in store.lease_holders() if not s.startswith("executor:")}


def _turns(dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT workflow_uuid, status FROM dbos.workflow_status "
                            "WHERE name = 'wisp_turn'").fetchall()
    return [(str(w), str(s)) for w, s in rows]


def _finished(events: list[JSON]) -> bool:
    return any(e["type"] == "agent.message" for e in events) and (
        events[-1]["type"] == "session.status_idle"
        and events[-1]["stop_reason"]["type"] == "end_turn")


def test_two_apis_two_workers_one_killed_mid_turn(tmp_path: Path, dsn: str) -> None:
    with Deployment(tmp_path, dsn, LookupThenAnswer()) as deployment:
        model, store = deployment.model, deployment.store
        workers = [deployment.start("worker") for _ in (1, 2)]
        clients = [deployment.start("api").client() for _ in (1, 2)]
        agent, environment = cloud_setup(clients[0], tools=[LOOKUP])
        sessions = [clients[i % 2].beta.sessions.create(
            agent=agent.id, environment_id=environment.id).id for i in range(SESSIONS)]
        stop, answered = threading.Event(), dict[str, int]()
        answerers = [threading.Thread(target=_answer_lookups, args=(
            clients[i], sessions[i::2], stop, answered), daemon=True) for i in (0, 1)]
        for thread in answerers:
            thread.start()
        for i, session_id in enumerate(sessions):
            clients[(i + 1) % 2].beta.sessions.events.send(
                session_id, events=[user_message(f"key-{i}")])

        victim, its_sessions = _kill_a_busy_worker(store, workers, model)
        deadline = time.monotonic() + 90
        logs: dict[str, list[JSON]] = {}
        while time.monotonic() < deadline and len(logs) < SESSIONS:
            for session_id in sessions:
                if session_id not in logs:
                    log = store.log(session_id)
                    if _finished(log):
                        logs[session_id] = log
            time.sleep(0.2)
        stop.set()
        survivor = next(w for w in workers if w is not victim)
        unfinished = [s for s in sessions if s not in logs]
        assert not unfinished, (unfinished, [e["type"] for e in store.log(unfinished[0])])

    assert victim.worker_name in survivor.stderr()  # "recovered the turns of <victim>"
    assert its_sessions, "the killed worker held no session"
    for i, session_id in enumerate(sessions):
        _check_once(logs[session_id], f"value-of-key-{i}")
        assert answered[session_id] == 1
    turns = _turns(dsn)
    assert len(turns) == SESSIONS and {s for _, s in turns} == {"SUCCESS"}, turns


def _kill_a_busy_worker(store: PostgresStore, workers: list[Served], model: ScriptedServer
                        ) -> tuple[Served, set[str]]:
    """SIGKILLs the worker holding the most session leases, once model calls are in
    flight (some sessions mid-turn on it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        holders = _lease_holders(store)
        if len(model.requests) >= 8 and holders:
            by_worker = {w: {s for s, h in holders.items() if h == w.worker_name}
                         for w in workers}
            victim = max(workers, key=lambda w: len(by_worker[w]))
            if by_worker[victim]:
                victim.kill()
                return victim, by_worker[victim]
        time.sleep(0.02)
    raise AssertionError("no worker took a session")


def _check_once(log: list[JSON], result: str) -> None:
    """One turn, exactly once: gap-free seqs; every event once, except client events
    (queued, then taken up); one tool call, one answer, one final message with it."""
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    counts: dict[str, int] = {}
    for event in log:
        counts[event["id"]] = counts.get(event["id"], 0) + 1
    for event in log:
        limit = 2 if event["type"].startswith("user.") else 1
        assert counts[event["id"]] <= limit, (event, [e["type"] for e in log])
    kinds = [e["type"] for e in log]
    assert kinds.count("agent.custom_tool_use") == 1, kinds
    messages = [e for e in log if e["type"] == "agent.message"]
    assert [m["content"][0]["text"] for m in messages] == [f"done: {result}"]
    ends = [e for e in log if e["type"] == "span.model_request_end"]
    starts = {e["id"] for e in log if e["type"] == "span.model_request_start"}
    assert len(ends) == 2 and all(e["model_request_start_id"] in starts for e in ends)


def test_a_worker_frozen_past_its_lease_writes_nothing_after_the_takeover(
        tmp_path: Path, dsn: str) -> None:
    """SIGSTOP (a long GC pause, a partition) outlasts the worker's lease: the other
    worker takes the turn over and finishes it; when the frozen one wakes mid-model-call,
    its writes are fenced off by the lease, so nothing appears twice."""
    with Deployment(tmp_path, dsn, reply.slow("one answer", 0.25, chunks=12)) as deployment:
        model, store = deployment.model, deployment.store
        workers = [deployment.start("worker") for _ in (1, 2)]
        client = deployment.start("api").client()
        agent, environment = cloud_setup(client, tools=[])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("hello")])
        model.wait_for_requests(1, timeout=20)
        holder = _wait_for_holder(store, session.id)
        frozen = next(w for w in workers if w.worker_name == holder)
        os.kill(frozen.proc.pid, signal.SIGSTOP)  # type: ignore[union-attr]
        try:
            log = _wait_until(lambda: store.log(session.id), _finished, 60)
        except AssertionError:
            print(_database_activity(deployment.dsn))
            raise
        finally:
            os.kill(frozen.proc.pid, signal.SIGCONT)  # type: ignore[union-attr]
        # The woken worker's stream goes on until a write of it is refused (or its lease
        # renewal fails first): it says so, and only then is the log final for it.
        _wait_for_line(frozen, "another worker holds it", 60)
        log = store.log(session.id)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    kinds = [e["type"] for e in log]
    assert kinds.count("agent.message") == 1, kinds
    assert kinds[-1] == "session.status_idle", kinds
    ids = [e["id"] for e in log if not e["type"].startswith("user.")]
    assert len(ids) == len(set(ids)), kinds


def _wait_for_line(served: Served, text: str, timeout: float) -> str:
    """The first stderr line of `served` holding `text`, read by a thread so the deadline
    holds even when the process says nothing."""
    assert served.proc is not None and served.proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    stream = served.proc.stderr

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if text in line:
            return line
        seen.append(line)
    raise AssertionError(f"no stderr line with {text!r} within {timeout} s: {seen}")


def _wait_for_holder(store: PostgresStore, session_id: str) -> str:
    holder = _wait_until(lambda: store.lease_holder(session_id), bool, 20)
    return str(holder)


def _wait_until(read: Any, done: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; last: {value!r}")
        time.sleep(0.1)


def test_a_turn_that_cannot_go_on_terminates_its_session(tmp_path: Path, dsn: str) -> None:
    """A turn waits on a custom tool; its worker dies; the environment's stored document
    is now unreadable, so the worker that takes the answered turn over fails on it. After its
    retries the turn ends the session: `session.error`, then `session.status_terminated`
    (final: the stream ends, new events are refused). Other sessions go on."""
    with Deployment(tmp_path, dsn, LookupThenAnswer()) as deployment:
        store = deployment.store
        worker = deployment.start("worker")
        api = deployment.start("api")
        client = api.client()
        agent, broken_env = cloud_setup(client, tools=[LOOKUP])
        healthy_env = client.beta.environments.create(name="ok", config={"type": "cloud"})
        broken = client.beta.sessions.create(agent=agent.id, environment_id=broken_env.id)
        client.beta.sessions.events.send(broken.id, events=[user_message("key-0")])
        waiting = _wait_until(lambda: store.log(broken.id), lambda log: any(
            e["type"] == "agent.custom_tool_use" for e in log), 30)
        worker.kill()
        with psycopg.connect(dsn) as conn:
            conn.execute("UPDATE wisp.resources SET doc = '{not json' WHERE id = %s",
                         (broken_env.id,))
        deployment.start("worker")
        call = next(e for e in waiting if e["type"] == "agent.custom_tool_use")
        client.beta.sessions.events.send(broken.id, events=[{  # the turn goes on: it fails
            "type": "user.custom_tool_result", "custom_tool_use_id": call["id"],
            "content": [{"type": "text", "text": "value"}]}])
        log = _wait_until(lambda: store.log(broken.id), lambda log: log[-1]["type"] ==
                          "session.status_terminated", 60)
        with pytest.raises(anthropic.BadRequestError, match="terminated"):
            client.beta.sessions.events.send(broken.id, events=[user_message("again")])
        healthy = client.beta.sessions.create(agent=agent.id, environment_id=healthy_env.id)
        client.beta.sessions.events.send(healthy.id, events=[user_message("key-1")])
        use = _wait_until(lambda: store.log(healthy.id), lambda log: any(
            e["type"] == "agent.custom_tool_use" for e in log), 30)
    kinds = [e["type"] for e in log]
    assert kinds[-2:] == ["session.error", "session.status_terminated"], kinds
    assert "the turn failed" in log[-2]["error"]["message"]
    assert any(e["type"] == "agent.custom_tool_use" for e in use)


def test_sigterm_hands_a_waiting_turn_to_another_worker_at_once(tmp_path: Path,
                                                                dsn: str) -> None:
    """A worker stopped with SIGTERM releases its executor lease: the other worker takes
    its waiting turn over without waiting for the lease to expire, and the client's
    answer completes the turn there."""
    with Deployment(tmp_path, dsn, LookupThenAnswer()) as deployment:
        store = deployment.store
        first = deployment.start("worker")
        api = deployment.start("api")
        client = api.client()
        agent, environment = cloud_setup(client, tools=[LOOKUP])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("key-7")])
        log = _wait_until(lambda: store.log(session.id), lambda log: log[-1]["type"] ==
                          "session.status_idle", 30)
        deployment.start("worker")  # the one that takes the turn over
        assert first.stop() == 0
        stopped = time.monotonic()
        call = next(e for e in log if e["type"] == "agent.custom_tool_use")
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.custom_tool_result", "custom_tool_use_id": call["id"],
            "content": [{"type": "text", "text": "value-of-key-7"}]}])
        log = _wait_until(lambda: store.log(session.id), _finished, 30)
        took = time.monotonic() - stopped
    _check_once(log, "value-of-key-7")
    assert took < 4.0, took  # the executor lease lives 5 s: released, not expired


def test_a_message_logged_but_never_dispatched_is_picked_up(tmp_path: Path,
                                                            dsn: str) -> None:
    """An API process that died between logging a `user.message` and enqueueing its turn
    (here: the event is written straight into the log) loses nothing: a worker's
    reconciler starts the turn."""
    with Deployment(tmp_path, dsn, reply.text("reconciled")) as deployment:
        store = deployment.store
        deployment.start("worker")
        client = deployment.start("api").client()
        agent, environment = cloud_setup(client, tools=[])
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        store.append(session.id, [shapes.client_event_record(user_message("hi"))])
        log = _wait_until(lambda: store.log(session.id), lambda log: log[-1]["type"] ==
                          "session.status_idle", 30)
    assert [e["content"][0]["text"] for e in log if e["type"] == "agent.message"] == [
        "reconciled"]


def test_events_no_turn_waits_for_are_taken_up_once_across_api_processes(
        tmp_path: Path, dsn: str) -> None:
    """Interrupts posted to an idle session through two API processes at once: nothing
    to interrupt, so each is taken up (logged consumed) — once, though both processes
    see both queued."""
    with Deployment(tmp_path, dsn, reply.text("idle now")) as deployment:
        store = deployment.store
        deployment.start("worker")
        clients = [deployment.start("api").client() for _ in (1, 2)]
        agent, environment = cloud_setup(clients[0], tools=[])
        session = clients[0].beta.sessions.create(agent=agent.id,
                                                  environment_id=environment.id)
        clients[0].beta.sessions.events.send(session.id, events=[user_message("hi")])
        _wait_until(lambda: store.log(session.id), _finished, 30)
        for _ in range(5):
            threads = [threading.Thread(target=client.beta.sessions.events.send, args=(
                session.id,), kwargs={"events": [{"type": "user.interrupt"}]})
                for client in clients]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        log = _wait_until(lambda: store.log(session.id), lambda log: sum(
            e["type"] == "user.interrupt" for e in log) >= 20 and not store.queued(
            session.id), 30)
        time.sleep(1)  # a second consumer would have written by now
        log = store.log(session.id)
    interrupts = [e for e in log if e["type"] == "user.interrupt"]
    by_id: dict[str, list[JSON]] = {}
    for event in interrupts:
        by_id.setdefault(event["id"], []).append(event)
    assert len(by_id) == 10
    for appearances in by_id.values():  # queued, then consumed: never consumed twice
        assert [e["processed_at"] is None for e in appearances] == [True, False]
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))


def _database_activity(dsn: str) -> str:
    """What every connection, turn and lease is doing: printed when a takeover stalls."""
    with psycopg.connect(dsn) as conn:
        activity = conn.execute(
            "SELECT pid, application_name, state, wait_event_type, wait_event, "
            "now() - xact_start, left(query, 100) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()
        turns = conn.execute("SELECT workflow_uuid, status, executor_id "
                             "FROM dbos.workflow_status").fetchall()
        leases = conn.execute("SELECT * FROM wisp.leases").fetchall()
    return "\n".join(["activity:", *map(str, activity), f"turns: {turns}",
                      f"leases: {leases}"])
