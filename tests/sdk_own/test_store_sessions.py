"""Sessions with a subagent, written by the real `wisp` and driven by the official Python
SDK: mirrored into the SDK's own store (`--session-mirror`, subagents included), and read
back through wisp.sdk's store helpers and disk subagent readers, which must agree with
the official SDK's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import sdk_env, wisp_executable
from tests.subagents.reference import ask_of, foreground
from wisp import sdk as ours
from wisp.testing import ScriptedServer, reply

official = pytest.importorskip("claude_agent_sdk")


def _run(prompt: str, options: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [m async for m in official.query(prompt=prompt, options=options)]

    return asyncio.run(asyncio.wait_for(go(), 60))


def _session(tmp_path: Path, store: Any) -> tuple[str, str, Path, Path]:
    """(session id, subagent id, work folder, config folder) of one run whose model
    starts a foreground subagent."""
    home, work, config = tmp_path / "home", tmp_path / "work", tmp_path / "config"
    home.mkdir()
    work.mkdir()
    with ScriptedServer(default=reply.dynamic(lambda b: foreground(ask_of(b)))) as server:
        env = {**sdk_env(server, home), "CLAUDE_CONFIG_DIR": str(config)}
        options = official.ClaudeAgentOptions(
            cli_path=wisp_executable(tmp_path), cwd=str(work), env=env,
            allowed_tools=["Bash", "Task", "Read"], session_store=store)
        messages = _run("[[MAIN]] go", options)
    [started] = [m for m in messages if isinstance(m, official.TaskStartedMessage)]
    return started.session_id, started.task_id, work, config


def _shape(messages: list[Any]) -> list[tuple[str, str, Any]]:
    return [(m.type, m.uuid, m.parent_tool_use_id) for m in messages]


def test_a_subagent_reaches_the_store_and_every_reader_agrees(tmp_path, monkeypatch):
    store = official.InMemorySessionStore()
    session_id, agent_id, work, config = _session(tmp_path, store)
    directory = str(work)
    mirrored = asyncio.run(official.get_subagent_messages_from_store(
        store, session_id, agent_id, directory=directory))
    assert mirrored and {m.parent_tool_use_id for m in mirrored} == {"toolu_fg_agent"}
    assert asyncio.run(official.list_subagents_from_store(store, session_id,
                                                          directory=directory)) == [agent_id]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    # On disk: wisp.sdk's subagent readers say what the official ones say.
    assert ours.list_subagents(session_id, directory) == official.list_subagents(
        session_id, directory) == [agent_id]
    assert _shape(ours.get_subagent_messages(session_id, agent_id, directory)) == _shape(
        official.get_subagent_messages(session_id, agent_id, directory))
    # Imported into wisp's SQLite store, then read through wisp.sdk's store helpers.
    mine = ours.SqliteSessionStore(tmp_path / "sessions.db")
    asyncio.run(ours.import_session_to_store(session_id, mine, directory=directory))
    assert _shape(asyncio.run(ours.get_session_messages_from_store(
        mine, session_id, directory))) == _shape(official.get_session_messages(
            session_id, directory))
    assert _shape(asyncio.run(ours.get_subagent_messages_from_store(
        mine, session_id, agent_id, directory))) == _shape(mirrored)
    [listed] = asyncio.run(ours.list_sessions_from_store(mine, directory))
    [on_disk] = official.list_sessions(directory)
    assert (listed.session_id, listed.summary, listed.first_prompt) == (
        on_disk.session_id, on_disk.summary, on_disk.first_prompt)
    # The official store holds what the mirror wrote: the same conversation.
    assert _shape(asyncio.run(ours.get_session_messages_from_store(
        store, session_id, directory))) == _shape(official.get_session_messages(
            session_id, directory))
    mine.close()


def test_forking_and_renaming_in_a_store(tmp_path):
    store = ours.InMemorySessionStore()
    key = {"project_key": ours.project_key_for_directory(str(tmp_path)),
           "session_id": "11111111-1111-4111-8111-111111111111"}
    lines = [{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": key["session_id"],
              "message": {"role": "user", "content": "hi"}},
             {"type": "assistant", "uuid": "a1", "parentUuid": "u1",
              "sessionId": key["session_id"],
              "message": {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}}]
    asyncio.run(store.append(key, lines))
    sid = key["session_id"]
    asyncio.run(ours.rename_session_via_store(store, sid, "Greeting", str(tmp_path)))
    info = asyncio.run(ours.get_session_info_from_store(store, sid, str(tmp_path)))
    assert info is not None and info.custom_title == "Greeting"
    fork = asyncio.run(ours.fork_session_via_store(store, sid, str(tmp_path), title="Copy"))
    copied = asyncio.run(ours.get_session_messages_from_store(store, fork.session_id,
                                                              str(tmp_path)))
    assert [m.message for m in copied] == [line["message"] for line in lines]
    assert not {m.uuid for m in copied} & {"u1", "a1"}
    asyncio.run(ours.delete_session_via_store(store, sid, str(tmp_path)))
    assert asyncio.run(ours.get_session_messages_from_store(store, sid, str(tmp_path))) == []
