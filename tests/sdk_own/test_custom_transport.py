"""A custom transport (`wisp.sdk.transport.Transport`, or the official SDK's `Transport`):
wisp.sdk speaks the control protocol over it, here to a real `wisp` process the transport
starts itself, through `query()` and `ClaudeSDKClient`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, wisp_command
from wisp.sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, query
from wisp.sdk.transport import Transport
from wisp.testing import ScriptedServer, reply

ARGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")


class PipeTransport(Transport):
    """Starts `wisp` in a folder and moves lines over its pipes; records what it wrote."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.written: list[Any] = []

    async def connect(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *wisp_command(), *ARGS, cwd=self.cwd, env=self.env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)

    async def write(self, data: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.written += [json.loads(line) for line in data.splitlines() if line]
        self.proc.stdin.write(data.encode())
        await self.proc.stdin.drain()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            if line.strip():
                yield json.loads(line)

    async def end_input(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()

    async def close(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            await self.end_input()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    def is_ready(self) -> bool:
        return self.proc is not None and self.proc.returncode is None


@pytest.fixture
def pipe(server: ScriptedServer, tmp_path: Path) -> PipeTransport:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return PipeTransport(base_env(server, home), work)


def test_query_speaks_over_a_custom_transport(server, pipe):
    server.script(reply.text("over the pipe"))

    async def go() -> list[Any]:
        return [m async for m in query(prompt="hi", options=ClaudeAgentOptions(),
                                       transport=pipe)]

    messages = asyncio.run(asyncio.wait_for(go(), 60))
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "over the pipe"
    assert [f["type"] for f in pipe.written][:2] == ["control_request", "user"]
    assert pipe.written[0]["request"]["subtype"] == "initialize"
    assert pipe.proc is not None and pipe.proc.returncode == 0


def test_a_client_runs_two_turns_over_it(server, pipe):
    server.script(reply.text("one"), reply.text("two"))

    async def go() -> list[str]:
        texts = []
        async with ClaudeSDKClient(ClaudeAgentOptions(), transport=pipe) as client:
            for prompt in ("first", "second"):
                await client.query(prompt)
                texts += [m.result async for m in client.receive_response()
                          if isinstance(m, ResultMessage)]
        return texts

    assert asyncio.run(asyncio.wait_for(go(), 60)) == ["one", "two"]
    assert [r.body["messages"][-1]["content"] for r in server.requests][-1] == "second"


def test_an_official_sdk_transport_works_too(server, pipe):
    official = pytest.importorskip("claude_agent_sdk")

    class OfficialPipe(PipeTransport, official.Transport):
        """The same transport, declared against the official SDK's abstract class."""

    transport = OfficialPipe(pipe.env, pipe.cwd)
    assert isinstance(transport, official.Transport)
    server.script(reply.text("official shape"))

    async def go() -> list[Any]:
        return [m async for m in query(prompt="hi", transport=transport)]

    messages = asyncio.run(asyncio.wait_for(go(), 60))
    assert [m.result for m in messages if isinstance(m, ResultMessage)] == ["official shape"]
