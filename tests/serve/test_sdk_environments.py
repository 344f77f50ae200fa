"""Agent versions, environment updates and the self-hosted work queue, driven by the
official `anthropic` SDK: `agents.versions.list`, `environments.update`,
`environments.work.*`, and the SDK's own `EnvironmentWorker` serving a session to the
end, also after its process is killed and another takes over."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import (
    KEYS,
    anthropic,
    idle_end_turn,
    serving,
    user_message,
    wait_for,
)
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
SHORT_TTL = {"WISP_SERVE_WORK_TTL_S": "2"}


def self_hosted(client: Any) -> tuple[Any, Any]:
    agent = client.beta.agents.create(name="hosted", model="claude-sonnet-4-5",
                                      tools=[{"type": "agent_toolset_20260401"}])
    environment = client.beta.environments.create(name="mine",
                                                  config={"type": "self_hosted"})
    return agent, environment


def test_agent_versions_are_listed_newest_first_and_page(tmp_path: Path,
                                                         server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        agent = client.beta.agents.create(name="v", model="claude-sonnet-4-5")
        for n in range(1, 4):
            client.beta.agents.update(agent.id, version=n, system=f"system {n + 1}")
        versions = list(client.beta.agents.versions.list(agent.id, limit=3))
        first_page = client.beta.agents.versions.list(agent.id, limit=3)
        try:
            client.beta.agents.versions.list("agent_missing")
        except anthropic.NotFoundError:
            pass
        else:
            raise AssertionError("versions of a missing agent")
    assert [v.version for v in versions] == [4, 3, 2, 1]  # all pages, newest first
    assert [v.system for v in versions] == ["system 4", "system 3", "system 2", None]
    assert {v.id for v in versions} == {agent.id}
    assert len(first_page.data) == 3 and first_page.next_page


def test_an_environment_is_updated(tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        environment = client.beta.environments.create(
            name="before", description="d", metadata={"a": "1", "b": "2"})
        updated = client.beta.environments.update(
            environment.id, name="after", metadata={"a": None, "c": "3"},
            config={"type": "cloud", "networking": {"type": "unrestricted"}})
        retrieved = client.beta.environments.retrieve(environment.id)
        with pytest.raises(anthropic.BadRequestError, match=r"config\.type"):
            client.beta.environments.update(environment.id,
                                            config={"type": "self_hosted"})
    assert (updated.name, updated.description) == ("after", "d")
    assert updated.metadata == {"b": "2", "c": "3"}
    assert retrieved.name == "after" and retrieved.updated_at >= environment.updated_at


def test_the_work_queue_leases_heartbeats_and_stops(tmp_path: Path,
                                                    server: ScriptedServer) -> None:
    with serving(tmp_path, server, env={"WISP_SERVE_WORK_TTL_S": "1"}) as served:
        client = served.client()
        work = client.beta.environments.work
        agent, environment = self_hosted(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        assert work.stats(environment.id).depth == 1  # a new session asks for a worker
        item = work.poll(environment.id, anthropic_worker_id="w1")
        assert item is not None and item.data.id == session.id and item.state == "queued"
        stats = work.stats(environment.id)
        assert (stats.depth, stats.pending, stats.workers_polling) == (0, 1, 1)
        assert work.poll(environment.id, block_ms=100) is None  # held by w1
        assert work.ack(item.id, environment_id=environment.id).state == "starting"
        beat = work.heartbeat(item.id, environment_id=environment.id,
                              expected_last_heartbeat="NO_HEARTBEAT")
        assert beat.lease_extended and beat.state == "active" and beat.ttl_seconds == 1
        with pytest.raises(anthropic.PreconditionFailedError) as failed:
            work.heartbeat(item.id, environment_id=environment.id,
                           expected_last_heartbeat="NO_HEARTBEAT")
        assert failed.value.error_code == "heartbeat_precondition_failed"
        time.sleep(1.3)  # the lease lapses: the item goes to the next poll, started over
        again = work.poll(environment.id, anthropic_worker_id="w2")
        assert again is not None and again.id == item.id
        assert again.latest_heartbeat_at is None
        with pytest.raises(anthropic.PreconditionFailedError):  # the first holder is out
            work.heartbeat(item.id, environment_id=environment.id,
                           expected_last_heartbeat=beat.last_heartbeat)
        work.ack(item.id, environment_id=environment.id)
        beat = work.heartbeat(item.id, environment_id=environment.id,
                              expected_last_heartbeat="NO_HEARTBEAT", desired_ttl_seconds=30)
        assert beat.ttl_seconds == 30
        assert work.stop(item.id, environment_id=environment.id).state == "stopping"
        told = work.heartbeat(item.id, environment_id=environment.id,
                              expected_last_heartbeat=beat.last_heartbeat)
        assert (told.lease_extended, told.state) == (False, "stopping")
        done = work.stop(item.id, environment_id=environment.id, force=True)
        assert done.state == "stopped" and done.stopped_at is not None
        with pytest.raises(anthropic.ConflictError):
            work.stop(item.id, environment_id=environment.id, force=True)
        tagged = work.update(item.id, environment_id=environment.id, metadata={"k": "v"})
        assert work.retrieve(item.id, environment_id=environment.id).metadata == {"k": "v"}
        assert tagged.secret is None
        client.beta.sessions.events.send(session.id, events=[user_message("more")])
        listed = list(work.list(environment.id))
        fresh = work.poll(environment.id, reclaim_older_than_ms=200)
        assert fresh is not None and fresh.id != item.id  # a message asked for a worker
        time.sleep(0.3)  # polled, never acknowledged: handed out again
        assert (work.poll(environment.id) or item).id == fresh.id
        with pytest.raises(anthropic.NotFoundError):
            served.client(KEYS[1]).beta.environments.work.list(environment.id)
    assert sorted(i.state for i in listed) == ["queued", "stopped"]


def test_the_sdks_environment_worker_serves_a_session_and_honours_a_stop(
        tmp_path: Path, server: ScriptedServer) -> None:
    from anthropic.lib.environments import EnvironmentWorker

    server.script(reply.tool_use("bash", {"command": "echo from-the-worker > made.txt"}),
                  reply.text("made it"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    with serving(tmp_path, server, env=SHORT_TTL) as served:
        client = served.client()
        agent, environment = self_hosted(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("make a file")])

        async def scenario() -> Any:
            worker = EnvironmentWorker(served.async_client(), environment_id=environment.id,
                                       environment_key=KEYS[0], workdir=workdir,
                                       max_idle=None)
            running = asyncio.ensure_future(worker.run())
            try:
                await asyncio.to_thread(wait_for, client, session.id, idle_end_turn, 60)
                [item] = list(client.beta.environments.work.list(environment.id))
                assert item.state == "active"
                client.beta.environments.work.stop(item.id, environment_id=environment.id)
                return await asyncio.to_thread(_stopped, client, environment.id, item.id)
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running

        stopped = asyncio.run(asyncio.wait_for(scenario(), 90))
        events = wait_for(client, session.id, idle_end_turn)
    assert stopped.state == "stopped"
    assert (workdir / "made.txt").read_text() == "from-the-worker\n"
    result = next(e for e in events if e["type"] == "user.tool_result")
    assert result["is_error"] in (False, None)
    assert "made it" in [e["content"][0]["text"] for e in events
                         if e["type"] == "agent.message"]


def _stopped(client: Any, environment_id: str, work_id: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        item = client.beta.environments.work.retrieve(work_id, environment_id=environment_id)
        if item.state == "stopped" or time.monotonic() > deadline:
            return item
        time.sleep(0.1)


@contextlib.contextmanager
def worker_process(url: str, environment_id: str, workdir: Path) -> Iterator[
        subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.serve.environment_worker", url, KEYS[0],
         environment_id, str(workdir)],
        cwd=ROOT, env={k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_a_killed_environment_worker_is_replaced_and_the_session_completes(
        tmp_path: Path, server: ScriptedServer) -> None:
    command = "echo started >> runs.txt; sleep 2; echo finished > out.txt"
    server.script(reply.tool_use("bash", {"command": command}), reply.text("all done"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    with serving(tmp_path, server, env=SHORT_TTL) as served:
        client = served.client()
        agent, environment = self_hosted(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("run it")])
        with worker_process(served.url, environment.id, workdir) as first:
            deadline = time.monotonic() + 60
            while not (workdir / "runs.txt").exists():
                assert first.poll() is None, first.stderr and first.stderr.read()
                assert time.monotonic() < deadline, "the first worker never ran the call"
                time.sleep(0.05)
            os.killpg(first.pid, signal.SIGKILL)  # mid-call: no result, no stop
        assert not (workdir / "out.txt").exists()
        with worker_process(served.url, environment.id, workdir):
            events = wait_for(client, session.id, idle_end_turn, timeout=90)
        [item] = list(client.beta.environments.work.list(environment.id))
    assert (workdir / "runs.txt").read_text() == "started\nstarted\n"  # run again, once
    assert (workdir / "out.txt").read_text() == "finished\n"
    results = [e for e in events if e["type"] == "user.tool_result"]
    assert len(results) == 1
    assert item.state in ("active", "stopped")
    assert len(server.requests) == 2
