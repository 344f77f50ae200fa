"""Session resources through the official `anthropic` SDK: a file mounted at its
`mount_path` in the session's workspace, readable by the session's tools, absent from
other sessions; resources added, listed, retrieved and deleted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import anthropic, cloud_setup, serving, user_message, wait_for
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def ended(count: int) -> Callable[[list[JSON]], bool]:
    def done(events: list[JSON]) -> bool:
        return sum(e["type"] == "session.status_idle"
                   and e["stop_reason"]["type"] == "end_turn" for e in events) >= count
    return done


def results(events: list[JSON]) -> list[JSON]:
    return [e for e in events if e["type"] == "agent.tool_result"]


def test_a_file_resource_is_read_at_its_mount_path_by_its_session_only(
        tmp_path: Path, server: ScriptedServer) -> None:
    read = reply.tool_use("read", {"file_path": "data/input.csv"})
    server.script(read, reply.text("read it"), read, reply.text("not there"),
                  reply.tool_use("bash", {"command": "ls data extra"}), reply.text("gone"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        upload = client.beta.files.upload(file=("input.csv", b"city,temp\nOslo,7\n"))
        extra = client.beta.files.upload(file=("extra.txt", b"more"))
        mine = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id,
            resources=[{"type": "file", "file_id": upload.id,
                        "mount_path": "/data/input.csv"}])
        other = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        [resource] = mine.resources
        client.beta.sessions.events.send(mine.id, events=[user_message("read the data")])
        first = results(wait_for(client, mine.id, ended(1)))
        client.beta.sessions.events.send(other.id, events=[user_message("read it too")])
        foreign = results(wait_for(client, other.id, ended(1)))
        added = client.beta.sessions.resources.add(mine.id, type="file", file_id=extra.id)
        listed = [r.id for r in client.beta.sessions.resources.list(mine.id)]
        got = client.beta.sessions.resources.retrieve(added.id, session_id=mine.id)
        with pytest.raises(anthropic.BadRequestError, match="authorization_token"):
            client.beta.sessions.resources.update(added.id, session_id=mine.id,
                                                  authorization_token="t")
        deleted = client.beta.sessions.resources.delete(resource.id, session_id=mine.id)
        client.beta.sessions.events.send(mine.id, events=[user_message("look again")])
        last = results(wait_for(client, mine.id, ended(2)))[-1]
        with pytest.raises(anthropic.BadRequestError, match="memory_store"):
            client.beta.sessions.resources.add(mine.id, file_id="x",
                                               extra_body={"type": "memory_store"},
                                               type="file")
        with pytest.raises(anthropic.NotFoundError, match="file_missing"):
            client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                        resources=[{"type": "file", "file_id": "file_missing"}])
    workspaces = tmp_path / "serve" / "workspaces"
    assert resource.mount_path == "/data/input.csv" and resource.file_id == upload.id
    assert "Oslo,7" in first[0]["content"][0]["text"] and not first[0]["is_error"]
    assert foreign[0]["is_error"]  # not in the other session's workspace
    assert not (workspaces / other.id / "data").exists()
    assert added.mount_path == f"/mnt/session/uploads/{extra.id}"
    assert listed == [resource.id, added.id] and got.id == added.id
    assert deleted.type == "session_resource_deleted"
    text = last["content"][0]["text"]
    assert "input.csv" not in text  # unmounted once its resource was deleted
    assert (workspaces / mine.id / "mnt/session/uploads" / extra.id).read_bytes() == b"more"
    mode = (workspaces / mine.id / "mnt/session/uploads" / extra.id).stat().st_mode
    assert mode & 0o777 == 0o444


def test_a_mounted_file_stays_as_given_whatever_tool_writes_it(
        tmp_path: Path, server: ScriptedServer) -> None:
    """Even as root (no file mode stops root): the sandbox mounts it read-only and the
    file tools refuse it."""
    # Code the judge cannot read: the sandbox alone holds it.
    sneaky = ("python3 -c \"import os; p='data/' + 'input.csv'; "
              "open(p, 'w').write('changed')\"; cat data/input.csv")
    server.script(reply.tool_use("bash", {"command": sneaky}),
                  reply.tool_use("write", {"file_path": "data/input.csv", "content": "w"}),
                  reply.tool_use("edit", {"file_path": "data/input.csv", "old_string": "Oslo",
                                          "new_string": "Bergen"}),
                  reply.text("tried"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        upload = client.beta.files.upload(file=("input.csv", b"city,temp\nOslo,7\n"))
        session = client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id,
            resources=[{"type": "file", "file_id": upload.id,
                        "mount_path": "/data/input.csv"}])
        client.beta.sessions.events.send(session.id, events=[user_message("change it")])
        tried = results(wait_for(client, session.id, ended(1)))
    placed = tmp_path / "serve" / "workspaces" / session.id / "data" / "input.csv"
    assert placed.read_text() == "city,temp\nOslo,7\n"
    assert "Oslo,7" in str(tried[0]["content"])
    assert tried[1]["is_error"] and tried[2]["is_error"], tried
