"""Subagents and background tasks through the official SDKs driving the real `wisp`
process: the task frames arrive as the Python SDK's typed messages in order, a background
command's notification arrives (and wakes a turn) after a one-shot `query()` closed stdin,
`stop_task` ends a command and its process tree, `forward_subagent_text` shows a
subagent's text, the SDK's subagent helpers read the subagent's transcript, and the
TypeScript SDK sees the same frames and stops a task with `stopTask`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.needs import missing, node_or_skip
from tests.sdk.conftest import sdk_env, wisp_executable
from tests.subagents.reference import LONG, Ask, ask_of, background_command, foreground
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is not installed")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    get_subagent_messages,
    list_subagents,
    query,
)

T = TypeVar("T")
TS_DIR = Path(__file__).resolve().parents[1] / "sdk" / "ts"
TS_SDK = TS_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def routed(route: Any) -> ScriptedServer:
    return ScriptedServer(default=reply.dynamic(lambda body: route(ask_of(body))))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def options(server: ScriptedServer, home: Path, work: Path, tmp_path: Path,
            **kwargs: Any) -> ClaudeAgentOptions:
    env = {**sdk_env(server, home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    return ClaudeAgentOptions(cli_path=wisp_executable(tmp_path), cwd=str(work), env=env,
                              allowed_tools=["Bash", "Task", "Read"], **kwargs)


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=opts)]


def task_messages(messages: list[Any]) -> list[str]:
    kinds = (TaskStartedMessage, TaskProgressMessage, TaskUpdatedMessage,
             TaskNotificationMessage, ResultMessage)
    return [type(m).__name__ for m in messages if isinstance(m, kinds)]


def test_a_foreground_subagent_reports_as_typed_task_messages(
        tmp_path: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with routed(foreground) as server:
        messages = run(collect("[[MAIN]] go", options(server, home, work, tmp_path)))
    assert task_messages(messages) == ["TaskStartedMessage", "TaskProgressMessage",
                                       "TaskUpdatedMessage", "TaskNotificationMessage",
                                       "ResultMessage"]
    [started] = [m for m in messages if isinstance(m, TaskStartedMessage)]
    [progress] = [m for m in messages if isinstance(m, TaskProgressMessage)]
    [updated] = [m for m in messages if isinstance(m, TaskUpdatedMessage)]
    [done] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert (started.task_type, started.tool_use_id, started.description) == (
        "local_agent", "toolu_fg_agent", "count the files")
    assert progress.last_tool_name == "Bash" and progress.description == "Running say hi"
    assert set(progress.usage) == {"total_tokens", "tool_uses", "duration_ms"}
    assert updated.status == "completed" and updated.task_id == started.task_id
    assert (done.status, done.summary, done.tool_use_id) == ("completed", "sub done",
                                                             "toolu_fg_agent")
    # The subagent's tool call is shown, its own words are not (no forward_subagent_text).
    sub = [m for m in messages if isinstance(m, AssistantMessage) and m.parent_tool_use_id]
    assert sub and not any(isinstance(b, TextBlock) for m in sub for b in m.content)
    # Its transcript is where the SDK's helpers look.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    assert list_subagents(started.session_id, directory=str(work)) == [started.task_id]
    seen = get_subagent_messages(started.session_id, started.task_id, directory=str(work))
    assert seen[0].type == "user" and seen[-1].type == "assistant"
    assert {m.parent_tool_use_id for m in seen} == {"toolu_fg_agent"}


def test_forward_subagent_text_shows_what_the_subagent_says(
        tmp_path: Path, home: Path, work: Path) -> None:
    with routed(foreground) as server:
        opts = options(server, home, work, tmp_path, forward_subagent_text=True)
        messages = run(collect("[[MAIN]] go", opts))
    said = [b.text for m in messages if isinstance(m, AssistantMessage)
            and m.parent_tool_use_id == "toolu_fg_agent"
            for b in m.content if isinstance(b, TextBlock)]
    assert said == ["sub thinking aloud", "sub done"]


def test_a_background_command_notifies_after_the_turn_and_wakes_a_turn(
        tmp_path: Path, home: Path, work: Path) -> None:
    # query() with a string prompt and no callbacks closes stdin at once: wisp still waits
    # for the command, reports its end and runs the turn it wakes.
    with routed(background_command("sleep 1; echo bg-out")) as server:
        messages = run(collect("[[MAIN]] go", options(server, home, work, tmp_path)))
    assert task_messages(messages) == ["TaskStartedMessage", "ResultMessage",
                                       "TaskUpdatedMessage", "TaskNotificationMessage",
                                       "ResultMessage"]
    [done] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert done.status == "completed"
    assert done.summary == 'Background command "run slow job" completed (exit code 0)'
    assert Path(done.output_file).read_text() == "bg-out\n\n[exited with code 0]\n"
    first, second = [m for m in messages if isinstance(m, ResultMessage)]
    assert (first.result, second.result) == ("main step 1", "main step 2")
    told = server.requests[-1].body["messages"][-1]["content"]
    assert "<status>completed</status>" in json.dumps(told)


def test_stop_task_ends_a_background_command_and_its_children(
        tmp_path: Path, home: Path, work: Path) -> None:
    command = f"{LONG} & echo $! > child.pid; wait"
    with routed(background_command(command)) as server:
        opts = options(server, home, work, tmp_path)

        async def scenario() -> list[Any]:
            async with ClaudeSDKClient(opts) as client:
                await client.query("[[MAIN]] go")
                first = [m async for m in client.receive_response()]
                [started] = [m for m in first if isinstance(m, TaskStartedMessage)]
                # Stop it once its child runs (on a loaded machine the shell may not have
                # started it yet): the point is that the child dies with the task.
                wait_until = time.monotonic() + 10
                while not (work / "child.pid").exists() and time.monotonic() < wait_until:
                    await asyncio.sleep(0.05)
                await client.stop_task(started.task_id)
                await client.stop_task("no-such-task")  # answered all the same
                later = []
                async for message in client.receive_messages():
                    later.append(message)
                    if isinstance(message, TaskNotificationMessage):
                        break
                return first + later

        started_at = time.monotonic()
        messages = run(scenario())
    assert time.monotonic() - started_at < 15  # it did not wait for the 20 s command
    [done] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    [updated] = [m for m in messages if isinstance(m, TaskUpdatedMessage)]
    assert (done.status, done.summary, updated.status) == ("stopped", "run slow job", "killed")
    child = int((work / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    return not (state.exists() and state.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_wisp_sdk_in_process_gets_the_notification(
        tmp_path: Path, home: Path, work: Path) -> None:
    from wisp import sdk as wisp_sdk

    with routed(background_command("sleep 1; echo bg-out")) as server:
        env = {**sdk_env(server, home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        opts = wisp_sdk.ClaudeAgentOptions(cwd=str(work), env=env, allowed_tools=["Bash"])

        async def scenario() -> list[Any]:
            return [m async for m in wisp_sdk.query(prompt="[[MAIN]] go", options=opts)]

        messages = run(scenario())
    notified = [m for m in messages if isinstance(m, wisp_sdk.TaskNotificationMessage)]
    assert [m.status for m in notified] == ["completed"]
    results = [m.result for m in messages if isinstance(m, wisp_sdk.ResultMessage)]
    assert results == ["main step 1", "main step 2"]


def _stopping(ask: Ask) -> Reply:
    return background_command(LONG)(ask)


def test_typescript_sdk_sees_task_frames_and_stops_a_task(
        tmp_path: Path, home: Path, work: Path) -> None:
    node = node_or_skip()
    if not TS_SDK.exists():
        missing("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)",
                "WISP_REQUIRE_NODE")
    with routed(_stopping) as server:
        env = {**sdk_env(server, home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
               "WISP_CLI": wisp_executable(tmp_path), "WISP_WORK": str(work)}
        started_at = time.monotonic()
        done = subprocess.run([node, str(TS_DIR / "tasks.mjs")], cwd=TS_DIR, env=env,
                              capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - started_at < 15
    messages = [json.loads(line)["message"] for line in done.stdout.splitlines()
                if line.startswith('{"message"')]
    kinds = [m["type"] if m["type"] == "result" else m["subtype"] for m in messages
             if m["type"] == "result" or str(m.get("subtype")).startswith("task_")]
    # Stopped before the turn ended, or (rarely) just after.
    assert kinds in (["task_started", "task_updated", "task_notification", "result"],
                     ["task_started", "result", "task_updated", "task_notification"]), kinds
    [note] = [m for m in messages if m.get("subtype") == "task_notification"]
    assert note["status"] == "stopped"
