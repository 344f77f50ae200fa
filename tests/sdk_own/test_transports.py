"""wisp.sdk's two transports, in-process and subprocess (`cli_path` = the real `wisp`),
against the scripted Messages API server: what each promises beyond the message stream.

Cancellation ends the run and its processes and leaves a resumable transcript; sessions
in one process don't share env or cwd; no line-length limit; configuration too big for
argv still arrives; clear errors for a missing CLI or folder.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    CLINotFoundError,
    ResultError,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    query,
)
from wisp.testing import ScriptedServer, reply

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def result_of(messages: list[Any]) -> ResultMessage:
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    return result


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent has not reaped it yet).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def wait_for_file(path: Path, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.05)
    return path.read_text().strip()


def test_cancelling_the_consumer_kills_the_tool_and_leaves_a_resumable_transcript(
        server: ScriptedServer, work: Path, make_options: Any) -> None:
    pid_file = work / "sleeper.pid"
    server.script(
        reply.tool_use("Bash", {"command": f"sleep 60 & echo $! > {pid_file}; wait"}),
        reply.text("resumed fine"),
    )
    options = make_options(permission_mode="bypassPermissions")
    seen: list[Any] = []

    async def consume() -> None:
        async for message in query(prompt="start a long job", options=options):
            seen.append(message)

    async def scenario() -> int:
        task = asyncio.ensure_future(consume())
        pid = int(await wait_for_file(pid_file))
        assert alive(pid)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pid

    pid = run(scenario())
    deadline = time.monotonic() + 10
    while alive(pid):
        assert time.monotonic() < deadline, "the tool's process outlived the cancelled run"
        time.sleep(0.05)
    session_id = next(m.data["session_id"] for m in seen if getattr(m, "subtype", "") == "init")

    async def resume() -> list[Any]:
        resumed = make_options(resume=session_id, permission_mode="bypassPermissions")
        return [m async for m in query(prompt="are you there?", options=resumed)]

    messages = run(resume())
    assert result_of(messages).result == "resumed fine"
    history = server.requests[-1].body["messages"]
    assert history[0] == {"role": "user", "content": "start a long job"}
    assert any(block.get("type") == "tool_use" for m in history if isinstance(m["content"], list)
               for block in m["content"])
    assert history[-1]["content"] == "are you there?" or "are you there?" in str(history[-1])


def test_disconnect_during_a_turn_leaves_nothing_running(
        server: ScriptedServer, work: Path, make_options: Any) -> None:
    pid_file = work / "client.pid"
    server.script(reply.tool_use("Bash", {"command": f"sleep 60 & echo $! > {pid_file}; wait"}))
    options = make_options(permission_mode="bypassPermissions")

    async def scenario() -> int:
        client = ClaudeSDKClient(options)
        await client.connect()
        await client.query("long job")
        pid = int(await wait_for_file(pid_file))
        started = time.monotonic()
        await client.disconnect()
        assert time.monotonic() - started < 8, "disconnect waited for the turn"
        return pid

    pid = run(scenario())
    deadline = time.monotonic() + 10
    while alive(pid):
        assert time.monotonic() < deadline, "disconnect left the tool's process running"
        time.sleep(0.05)


def test_concurrent_in_process_sessions_keep_their_own_cwd_and_env(
        server: ScriptedServer, tmp_path: Path, env: dict[str, str]) -> None:
    count = 12

    def answer(body: dict[str, Any]) -> Any:
        # Sessions interleave: each request is answered by where its own session stands.
        if len(body["messages"]) == 1:
            return reply.tool_use("Bash", {"command": "pwd; echo mark=$SESSION_MARK"})
        return reply.text("ok")

    server.script(*[reply.dynamic(answer) for _ in range(2 * count)])
    before_env, before_cwd = dict(os.environ), os.getcwd()

    async def one(index: int) -> tuple[str, str]:
        folder = tmp_path / f"session-{index}"
        folder.mkdir()
        options = ClaudeAgentOptions(cwd=str(folder), permission_mode="bypassPermissions",
                                     env={**env, "SESSION_MARK": str(index)})
        messages = [m async for m in query(prompt=f"session {index}", options=options)]
        [output] = tool_results(messages)
        return str(folder), str(output.content)

    async def scenario() -> list[tuple[str, str]]:
        return list(await asyncio.gather(*(one(i) for i in range(count))))

    for index, (folder, output) in enumerate(run(scenario())):
        assert output.splitlines() == [folder, f"mark={index}"]
    assert dict(os.environ) == before_env, "an in-process session wrote os.environ"
    assert os.getcwd() == before_cwd, "an in-process session changed the process's cwd"


def test_frames_bigger_than_the_official_line_limit_arrive_whole(
        server: ScriptedServer, make_options: Any) -> None:
    big = "x" * (3 * 1024 * 1024)  # the official SDK stops at 1 MiB lines
    server.script(reply.text(big))
    messages = run(collect("say a lot", make_options()))
    [answer] = [m for m in messages if isinstance(m, AssistantMessage)]
    assert answer.content[0].text == big, "the frame was shortened on its way"  # type: ignore[union-attr]
    assert result_of(messages).result == big


async def collect(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


def test_configuration_too_big_for_argv_still_arrives(
        server: ScriptedServer, make_options: Any) -> None:
    big_prompt = "You are a careful agent. " * 12_000  # ~300 KB: past one argv entry's limit
    server.script(reply.text("read it"))
    messages = run(collect("hi", make_options(system_prompt=big_prompt)))
    assert result_of(messages).result == "read it"
    system = server.requests[0].body["system"]
    assert big_prompt.strip() in str(system)


def test_an_error_result_is_yielded_then_raised_as_result_error(
        server: ScriptedServer, make_options: Any) -> None:
    server.script(reply.tool_use("Bash", {"command": "echo 1"}), reply.text("never"))
    seen: list[Any] = []

    async def scenario() -> None:
        options = make_options(max_turns=1, permission_mode="bypassPermissions")
        async for message in query(prompt="loop", options=options):
            seen.append(message)

    with pytest.raises(ResultError) as caught:
        run(scenario())
    assert result_of(seen).subtype == "error_max_turns"
    assert caught.value.subtype == "error_max_turns"
    assert isinstance(seen[-1], ResultMessage)


def test_a_missing_cli_is_a_clear_error(tmp_path: Path, work: Path) -> None:
    options = ClaudeAgentOptions(cli_path=str(tmp_path / "no-such-cli"), cwd=str(work))
    with pytest.raises(CLINotFoundError, match="no-such-cli"):
        run(collect("hi", options))


def test_a_missing_working_folder_is_a_clear_error(
        tmp_path: Path, make_options: Any) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(CLIConnectionError, match="gone"):
        run(collect("hi", make_options(cwd=str(missing))))


def test_an_unknown_resume_id_raises_instead_of_hanging(make_options: Any) -> None:
    options = make_options(resume="00000000-0000-4000-8000-000000000000")
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        run(collect("hi", options), timeout=30)
    assert time.monotonic() - started < 20
    assert "00000000-0000-4000-8000-000000000000" in str(caught.value) or \
        "exit code 1" in str(caught.value)


def test_assistant_messages_are_the_callers_own_copies(
        server: ScriptedServer, make_options: Any) -> None:
    """Changing a message we were given must not change the session's history."""
    server.script(reply.tool_use("Bash", {"command": "echo one"}), reply.text("two"),
                  reply.text("three"))

    async def scenario() -> None:
        async with ClaudeSDKClient(make_options(permission_mode="bypassPermissions")) as client:
            await client.query("first")
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    for block in message.content:
                        if hasattr(block, "input"):
                            block.input["command"] = "tampered"
            await client.query("second")
            _ = [m async for m in client.receive_response()]

    run(scenario())
    sent = str(server.requests[-1].body["messages"])
    assert "echo one" in sent and "tampered" not in sent
