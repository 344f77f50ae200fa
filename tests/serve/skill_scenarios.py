"""What the skills tests do through the official `anthropic` SDK, on whichever store the
service runs on (SQLite in tests/serve, PostgreSQL in tests/serve/pg): uploads (multipart
`files[]`) checked, listed, retrieved, downloaded and deleted; a skill attached to an
agent is offered to the model through the Skill tool and its files are readable, and not
writable, in the session's workspace."""

from __future__ import annotations

import asyncio
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import anthropic, cloud_setup, user_message, wait_for
from tests.serve.test_sdk_settings import idled, refused
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def skill_md(name: str, description: str, body: str = "Read reference.md first.") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n".encode()


NOTES = [("pdf-notes/SKILL.md", skill_md("pdf-notes", "Take notes from PDF files")),
         ("pdf-notes/reference.md", b"REF-CONTENT-7\n"),
         ("pdf-notes/scripts/run.sh", b"#!/bin/sh\necho run\n")]


def skills_api(client: Any, stranger: Any) -> None:
    """`stranger` is a client with another API key."""
    skills = client.beta.skills
    skill = skills.create(files=NOTES)
    named = skills.create(files=[("SKILL.md", skill_md("other", "x"))],
                          display_name="My other skill")
    first = skills.versions.retrieve(skill.latest_version_id, skill_id=skill.id)
    second = skills.versions.create(skill.id, files=[
        ("pdf-notes/SKILL.md", skill_md("pdf-notes", "Notes, better"))])
    latest = skills.retrieve(skill.id)
    listed = [s.id for s in skills.list()]
    anthropic_ones = list(skills.list(source="anthropic"))
    versions = [v.id for v in skills.versions.list(skill.id)]
    archive = skills.versions.download(first.id, skill_id=skill.id).read()
    refused(lambda: skills.versions.create(skill.id, files=[
        ("x/SKILL.md", skill_md("renamed", "y"))]), "pdf-notes", "renamed")
    refused(lambda: skills.create(files=[("a/notes.md", b"no skill file")]), "SKILL.md")
    refused(lambda: skills.create(files=[("a/SKILL.md", skill_md("a", "y")),
                                         ("b/x.md", b"")]), "same top-level folder")
    refused(lambda: skills.create(files=[("../SKILL.md", skill_md("a", "y"))]),
            "files[0]")
    refused(lambda: skills.create(files=[("Bad Name/SKILL.md", b"no front matter")]),
            "kebab-case")
    with pytest.raises(anthropic.NotFoundError):
        stranger.beta.skills.retrieve(skill.id)
    gone = skills.versions.delete(second.id, skill_id=skill.id)
    after = skills.retrieve(skill.id)
    refused(lambda: skills.versions.delete(first.id, skill_id=skill.id), "only version")
    deleted = skills.delete(skill.id)
    with pytest.raises(anthropic.NotFoundError):
        skills.retrieve(skill.id)
    with pytest.raises(anthropic.NotFoundError):
        skills.versions.retrieve(first.id, skill_id=skill.id)
    assert skill.display_name == "pdf-notes" and skill.source.type == "custom"
    assert named.display_name == "My other skill"
    assert (first.name, first.description, first.skill_id) == (
        "pdf-notes", "Take notes from PDF files", skill.id)
    assert latest.latest_version_id == second.id != first.id
    assert second.description == "Notes, better"
    assert listed == [named.id, skill.id] and anthropic_ones == []
    assert versions == [second.id, first.id]
    with zipfile.ZipFile(io.BytesIO(archive)) as unzipped:
        assert sorted(unzipped.namelist()) == [
            "pdf-notes/SKILL.md", "pdf-notes/reference.md", "pdf-notes/scripts/run.sh"]
        assert unzipped.read("pdf-notes/reference.md") == b"REF-CONTENT-7\n"
    assert gone.type == "skill_version_deleted" and after.latest_version_id == first.id
    assert deleted.type == "skill_deleted"


def session_uses_skill(server: ScriptedServer, client: Any, workspaces: Path) -> None:
    server.script(reply.tool_use("Skill", {"skill": "pdf-notes"}),
                  reply.tool_use("read", {"file_path": "skills/pdf-notes/reference.md"}),
                  reply.tool_use("write", {"file_path": "skills/pdf-notes/reference.md",
                                           "content": "changed"}),
                  reply.text("done"), reply.text("again"))
    skill = client.beta.skills.create(files=NOTES)
    agent, environment = cloud_setup(client)
    agent = client.beta.agents.update(agent.id, version=agent.version, skills=[
        {"type": "custom", "skill_id": skill.id}])
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("take notes")])
    events = wait_for(client, session.id, idled("end_turn"))
    refused(lambda: client.beta.agents.create(name="a", model="claude-sonnet-4-5",
                                              skills=[{"type": "custom",
                                                       "skill_id": "skill_nope"}]),
            "skills[0]", "skill_nope")
    refused(lambda: client.beta.agents.create(name="a", model="claude-sonnet-4-5",
                                              skills=[{"type": "anthropic",
                                                       "skill_id": "xlsx"}]),
            "skills[0]", "Anthropic skills")
    client.beta.skills.delete(skill.id)
    refused(lambda: client.beta.sessions.create(agent=agent.id,
                                                environment_id=environment.id),
            "agent.skills[0]", skill.id)
    client.beta.sessions.events.send(session.id, events=[user_message("more notes")])
    later = wait_for(client, session.id, idled("end_turn", 2))
    [gone] = [e for e in later if e["type"] == "session.error"]
    assert "no longer exists" in gone["error"]["message"]
    assert agent.skills[0].version == skill.latest_version_id
    [offered] = [t for t in server.requests[0].body["tools"] if t["name"] == "Skill"]
    assert "- pdf-notes: Take notes from PDF files" in offered["description"]
    loaded, read, write = [e for e in events if e["type"] == "agent.tool_result"]
    assert not loaded["is_error"] and not read["is_error"]
    assert "Read reference.md first." in loaded["content"][0]["text"]
    assert "loaded from skills/pdf-notes." in loaded["content"][0]["text"]
    assert "scripts/run.sh" in loaded["content"][0]["text"]
    assert "REF-CONTENT-7" in read["content"][0]["text"]
    assert write["is_error"]  # the skill's files are read-only
    folder = workspaces / session.id / "skills/pdf-notes"
    assert (folder / "reference.md").read_bytes() == b"REF-CONTENT-7\n"
    assert (folder / "scripts/run.sh").stat().st_mode & 0o777 == 0o555


def self_hosted_worker_gets_skills(client: Any, async_client: Any, workdir: Path) -> None:
    """The SDK's `AgentToolContext`, given the client and a self-hosted session, downloads
    the session agent's skills into `<workdir>/skills/<name>/` (retrieve + download)."""
    from anthropic.lib.tools.agent_toolset import AgentToolContext

    skill = client.beta.skills.create(files=NOTES)
    agent = client.beta.agents.create(name="h", model="claude-sonnet-4-5", skills=[
        {"type": "custom", "skill_id": skill.id, "version": "latest"}])
    environment = client.beta.environments.create(name="e", config={"type": "self_hosted"})
    session_id = client.beta.sessions.create(agent=agent.id,
                                             environment_id=environment.id).id

    async def enter() -> list[Path]:
        session = await async_client.beta.sessions.retrieve(session_id)
        async with AgentToolContext(workdir=str(workdir), client=async_client,
                                    session=session):
            return sorted(p.relative_to(workdir) for p in workdir.rglob("*") if p.is_file())

    found = asyncio.run(enter())
    assert [str(p) for p in found] == ["skills/pdf-notes/SKILL.md",
                                       "skills/pdf-notes/reference.md",
                                       "skills/pdf-notes/scripts/run.sh"]
