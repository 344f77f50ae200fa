"""`Runtime.warm_up` (what a duplex session does while the host has not prompted yet),
in one process against the scripted Messages API server: it sends nothing, and the first
turn after it encodes only what is new in its request (the prompt), not the tool
definitions and system blocks, which the warm-up encoded; the request is still the one a
session without the warm-up sends."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.sinks import Events
from wisp.engine.outcome import Success
from wisp.models import body as body_module
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.runtime import Runtime
from wisp.testing import ScriptedServer, reply


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    made = ScriptedServer(reply.text("ok"), reply.text("ok"))
    yield made
    made.close()


def _open(server: ScriptedServer, home: Path, cwd: Path) -> Runtime:
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "WISP_CONFIG_DIR": str(home / ".wisp"), "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_MAX_RETRIES": "0"}
    return Runtime.open(RuntimeConfig(cwd=cwd, env=env), Events())


def _first_turn(runtime: Runtime, server: ScriptedServer, warm: bool,
                encoded: list[object]) -> None:
    async def main() -> None:
        try:
            if warm:
                before, tasks = len(server.requests), asyncio.all_tasks()
                runtime.warm_up()
                # It sends nothing, now or later: no request, and no task left to send one.
                assert len(server.requests) == before
                assert asyncio.all_tasks() == tasks
            encoded.clear()  # what the turn itself encodes, from here
            assert await runtime.run_prompt("hi") == Success("ok")
        finally:
            await runtime.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_warmed_up_first_turn_encodes_only_its_prompt(
        server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[object] = []
    real = body_module.encode_value

    def spy(value: object) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(body_module, "encode_value", spy)
    cold = _open(server, tmp_path / "cold", tmp_path)
    _first_turn(cold, server, warm=False, encoded=encoded)
    cold_tools = [v for v in encoded if isinstance(v, dict) and "input_schema" in v]
    assert cold_tools  # without the warm-up, the first turn encodes the tool definitions

    warm = _open(server, tmp_path / "warm", tmp_path)
    _first_turn(warm, server, warm=True, encoded=encoded)
    assert not [v for v in encoded if isinstance(v, dict) and "input_schema" in v]
    assert [v for v in encoded if isinstance(v, dict) and "role" in v] == [
        {"role": "user", "content": "hi"}]
    cold_body, warm_body = (r.body for r in server.requests)
    for body in (cold_body, warm_body):  # each session's own id and device differ
        body.pop("metadata", None)
    assert warm_body == cold_body

