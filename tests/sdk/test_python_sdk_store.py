"""The official Python SDK's `session_store` against the real `wisp` (`--session-mirror`):
the transcript reaches the host's store as the session runs, a later query resumes from
the store alone, and the store's readers see what wisp wrote."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from wisp.testing import reply

sdk = pytest.importorskip("claude_agent_sdk")


async def _run(prompt: str, **options: object) -> list[object]:
    return [m async for m in sdk.query(prompt=prompt,
                                       options=sdk.ClaudeAgentOptions(**options))]


def test_a_session_mirrored_to_a_store_resumes_from_it(server, cli, work, env, tmp_path):
    server.script(reply.text("first answer"), reply.text("second answer"))
    store = sdk.InMemorySessionStore()
    # The SDK keys mirrored files by the config folder it knows: the one it passes on.
    config = tmp_path / "config"
    env = {**env, "CLAUDE_CONFIG_DIR": str(config)}
    common = {"cli_path": cli, "cwd": str(work), "env": env, "session_store": store}
    first = asyncio.run(asyncio.wait_for(_run("remember 42", **common), 60))
    [result] = [m for m in first if isinstance(m, sdk.ResultMessage)]
    session_id = result.session_id
    listed = asyncio.run(sdk.list_sessions_from_store(store, directory=str(work)))
    assert [s.session_id for s in listed] == [session_id]
    stored = asyncio.run(sdk.get_session_messages_from_store(store, session_id,
                                                             directory=str(work)))
    assert [m.type for m in stored] == ["user", "assistant"]
    # The local transcripts are gone: the resume can only come from the store.
    shutil.rmtree(config / "projects")
    second = asyncio.run(asyncio.wait_for(_run("what was it?", resume=session_id, **common),
                                          60))
    [again] = [m for m in second if isinstance(m, sdk.ResultMessage)]
    assert (again.is_error, again.result) == (False, "second answer")
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "remember 42" in str(sent[0]["content"])
