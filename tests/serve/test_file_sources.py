"""Images and documents that name an uploaded file (`source: {type: file, file_id}`): the
model receives the file's bytes (a provider has never seen this service's file ids), the
event log keeps what the client sent, and what the model could not read is a 400 on
receipt, naming the field."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import anthropic, cloud_setup, serving, wait_for
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def idle_end_turn(count: int = 1) -> Any:
    return lambda events: sum(
        e["type"] == "session.status_idle" and e["stop_reason"]["type"] == "end_turn"
        for e in events) >= count


def file_block(kind: str, file_id: str) -> JSON:
    return {"type": kind, "source": {"type": "file", "file_id": file_id}}


def test_the_model_reads_uploaded_images_and_documents_by_their_bytes(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.text("a picture and some notes"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        image = client.beta.files.upload(file=("dot.png", PNG, "image/png"))
        notes = client.beta.files.upload(file=("notes.txt", "héllo notes".encode(),
                                               "text/plain"))
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.message", "content": [
                {"type": "text", "text": "what are these?"},
                file_block("image", image.id), file_block("document", notes.id)]}])
        events = wait_for(client, session.id, idle_end_turn())
    sent = server.requests[0].body["messages"][-1]["content"]
    assert sent[1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(PNG).decode()}}
    assert sent[2]["source"] == {"type": "text", "media_type": "text/plain",
                                 "data": "héllo notes"}
    [posted] = [e for e in events if e["type"] == "user.message"]
    assert posted["content"][1]["source"] == {"type": "file", "file_id": image.id}


def test_a_custom_tool_result_may_carry_an_uploaded_image(
        tmp_path: Path, server: ScriptedServer) -> None:
    server.script(reply.tool_use("snapshot", {}), reply.text("seen"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client, tools=[{
            "type": "custom", "name": "snapshot", "description": "A picture of the screen",
            "input_schema": {"type": "object", "properties": {}}}])
        image = client.beta.files.upload(file=("shot.png", PNG, "image/png"))
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.message", "content": [{"type": "text", "text": "look"}]}])
        use = next(e for e in wait_for(client, session.id, lambda events: any(
            e["type"] == "agent.custom_tool_use" for e in events))
            if e["type"] == "agent.custom_tool_use")
        client.beta.sessions.events.send(session.id, events=[{
            "type": "user.custom_tool_result", "custom_tool_use_id": use["id"],
            "content": [file_block("image", image.id)]}])
        wait_for(client, session.id, idle_end_turn())
    [result] = [b for b in server.requests[1].body["messages"][-1]["content"]
                if b["type"] == "tool_result"]
    assert result["content"] == [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(PNG).decode()}}]


def test_files_the_model_cannot_read_are_refused_on_receipt(
        tmp_path: Path, server: ScriptedServer) -> None:
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        text = client.beta.files.upload(file=("notes.txt", b"plain", "text/plain"))
        archive = client.beta.files.upload(file=("a.zip", b"PK\x03\x04", "application/zip"))
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)

        def send(*blocks: JSON) -> None:
            client.beta.sessions.events.send(session.id, events=[{
                "type": "user.message", "content": [{"type": "text", "text": "x"}, *blocks]}])

        with pytest.raises(anthropic.BadRequestError,
                           match=r"events\[0\]\.content\[1\]\.source\.file_id.*image"):
            send(file_block("image", text.id))
        with pytest.raises(anthropic.BadRequestError, match="PDF or text"):
            send(file_block("document", archive.id))
        with pytest.raises(anthropic.NotFoundError, match="file_nothing"):
            send(file_block("image", "file_nothing"))
        listed = [e.type for e in client.beta.sessions.events.list(session.id)]
    assert "user.message" not in listed  # nothing refused reached the log
    assert server.requests == []
