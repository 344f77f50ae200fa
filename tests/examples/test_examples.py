"""The programs in examples/ run as a user runs them, against a scripted model.

Each example is started as a real subprocess (`python examples/x.py`), with HOME and the
working folder in tmp_path and ANTHROPIC_BASE_URL pointing at a `ScriptedServer` that
plays the model. Assertions are on what the example prints, on what it sent the model,
and on what it did to the files: a denied write or a blocked command must really not
have happened.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
JSON = dict[str, Any]


def run_example(server: ScriptedServer, tmp_path: Path, name: str, *args: str,
                timeout: float = 90) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], cwd=tmp_path,
        env=base_env(server, home), capture_output=True, text=True, timeout=timeout,
        check=False)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def message_requests(server: ScriptedServer) -> list[JSON]:
    return [r.body for r in server.requests
            if r.path.partition("?")[0].endswith("/v1/messages") and r.body is not None]


def conversation(body: JSON) -> list[JSON]:
    """The request's user and assistant messages (a CLI may add `role: "system"` ones)."""
    return [m for m in body["messages"] if m.get("role") in ("user", "assistant")]


def tool_results(body: JSON) -> list[JSON]:
    """The tool_result blocks of the request's last user message."""
    last = conversation(body)[-1]
    assert last["role"] == "user"
    content = last["content"]
    if isinstance(content, str):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: JSON) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content)
    return str(content)


def test_every_example_has_a_test() -> None:
    tested = {"one_shot.py", "multi_turn.py", "custom_tool.py", "permission_callback.py",
              "hook.py", "many_sessions.py", "offline.py"}  # offline.py: test_offline.py
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_one_shot_prints_the_answer_cost_and_turns(server: ScriptedServer,
                                                   tmp_path: Path) -> None:
    server.script(reply.text("Paris, famous for the Eiffel Tower."))
    proc = run_example(server, tmp_path, "one_shot.py", "What", "is", "the", "capital?")
    lines = proc.stdout.splitlines()
    assert lines[0] == "Paris, famous for the Eiffel Tower."
    assert "result: success" in lines
    assert "turns: 1" in lines
    assert any(line.startswith("cost: $") for line in lines)
    (body,) = message_requests(server)
    assert reply.last_user_text(body) == "What is the capital?"
    assert not body.get("tools")  # tools=[]: a plain question


def test_multi_turn_keeps_the_conversation(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(reply.text("Lisbon"), reply.text("Portugal."),
                  reply.text("The Belém Tower."))
    proc = run_example(server, tmp_path, "multi_turn.py")
    out = proc.stdout
    assert "[turn 1] claude: Lisbon" in out
    assert "[turn 2] claude: Portugal." in out
    assert "[turn 3] claude: The Belém Tower." in out
    assert "turns: 3" in out
    bodies = message_requests(server)
    assert len(bodies) == 3
    # Each turn sends the whole conversation: the third carries both earlier answers.
    messages = conversation(bodies[2])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert "Lisbon" in json.dumps(messages[1])
    assert "Portugal." in json.dumps(messages[3])


def test_custom_tool_runs_the_python_function(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(
        reply.tool_use("mcp__calc__add", {"a": 12.5, "b": 7.5}),
        reply.tool_use("mcp__calc__multiply", {"a": 20, "b": 3}),
        reply.tool_use("mcp__calc__divide", {"a": 1, "b": 0}),
        reply.text("The answer is 60."),
    )
    proc = run_example(server, tmp_path, "custom_tool.py")
    out = proc.stdout
    assert "[calc] add(12.5, 7.5) = 20" in out
    assert "[calc] multiply(20, 3) = 60" in out
    assert "answer: The answer is 60." in out
    assert "done: success" in out
    bodies = message_requests(server)
    names = {t["name"] for t in bodies[0]["tools"]}
    assert {"mcp__calc__add", "mcp__calc__multiply", "mcp__calc__divide"} <= names
    # The functions' answers went back to the model; allowed_tools meant no asking.
    (added,) = tool_results(bodies[1])
    assert result_text(added) == "20" and not added.get("is_error")
    (multiplied,) = tool_results(bodies[2])
    assert result_text(multiplied) == "60"
    (divided,) = tool_results(bodies[3])
    assert divided.get("is_error") is True
    assert "cannot divide by zero" in result_text(divided)


def test_permission_callback_allows_rewrites_and_denies(server: ScriptedServer,
                                                         tmp_path: Path) -> None:
    folder = tmp_path / "box"
    outside = tmp_path / "outside-summary.txt"
    shared = tmp_path / "shared.txt"  # outside the folder: reading it asks the callback
    shared.write_text("shared notes\n")
    server.script(
        reply.tool_use("Read", {"file_path": str(shared)}),
        reply.tool_use("Write", {"file_path": str(folder / "summary.txt"),
                                 "content": "The release moves to Friday.\n"}),
        reply.tool_use("Write", {"file_path": str(outside),
                                 "content": "The release moves to Friday.\n"}),
        reply.tool_use("Bash", {"command": "touch bash-was-here"}),
        reply.text("Saved the summary in the folder; the copy outside was refused."),
    )
    proc = run_example(server, tmp_path, "permission_callback.py", str(folder))
    out = proc.stdout

    # Allowed read, allowed and rewritten write, denied write, denied tool.
    assert "[permission] allow Read: read-only" in out
    assert "[permission] allow Write summary.txt, with a header added" in out
    assert f"[permission] deny Write {outside}: outside {folder}" in out
    assert "[permission] deny Bash: not allowed in this example" in out
    assert (folder / "summary.txt").read_text() == (
        "(written by an agent, approved by permission_callback.py)\n"
        "The release moves to Friday.\n")
    assert not outside.exists()
    assert not (folder / "bash-was-here").exists()
    assert "outside-summary.txt exists outside the folder: False" in out

    bodies = message_requests(server)
    (read,) = tool_results(bodies[1])
    assert "shared notes" in result_text(read) and not read.get("is_error")
    (denied,) = tool_results(bodies[3])
    assert denied.get("is_error") is True
    assert "Writing outside" in result_text(denied)
    (bash,) = tool_results(bodies[4])
    assert bash.get("is_error") is True and "Bash is not allowed here." in result_text(bash)
    # The result message lists the denials.
    assert "denied: Write" in out and "denied: Bash" in out


def test_hook_blocks_the_dangerous_command_and_logs_the_rest(server: ScriptedServer,
                                                             tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    server.script(
        reply.tool_use("Bash", {"command": "echo hello > hello.txt"}),
        reply.tool_use("Bash", {"command": "rm -rf ./*"}),
        reply.tool_use("Bash", {"command": "sudo ls /root"}),
        reply.tool_use("Bash", {"command": "ls"}),
        reply.text("Created hello.txt; the clean-up was blocked."),
    )
    proc = run_example(server, tmp_path, "hook.py", str(folder))
    out = proc.stdout

    assert (folder / "hello.txt").read_text() == "hello\n"
    assert (folder / "keep-me.txt").read_text() == "precious data\n"  # rm -rf never ran
    assert "[PreToolUse] ok: echo hello > hello.txt" in out
    assert "[PreToolUse] BLOCKED (recursive or forced rm): rm -rf ./*" in out
    assert "[PreToolUse] BLOCKED (sudo): sudo ls /root" in out
    # PostToolUse sees the calls that ran, and only those.
    post = [line for line in out.splitlines() if line.startswith("[PostToolUse]")]
    assert post[0] == "[PostToolUse] Bash 'echo hello > hello.txt' -> (no output)"
    assert post[1].startswith("[PostToolUse] Bash 'ls' -> hello.txt")
    assert len(post) == 2
    assert "files left in" in out and "'keep-me.txt'" in out

    bodies = message_requests(server)
    for index in (2, 3):  # the model is told why
        (blocked,) = tool_results(bodies[index])
        assert blocked.get("is_error") is True
        assert "Blocked by policy" in result_text(blocked)


def _many_sessions_model(count: int) -> Reply:
    """Each session's first request asks for the command from its prompt; the reply waits
    until all `count` first requests are in, which proves the sessions run concurrently.
    The second request (with the tool result) is answered with that output."""
    everyone_asked = threading.Barrier(count, timeout=30)

    def answer(body: JSON) -> Reply:
        if results := tool_results(body):
            return reply.text(result_text(results[0]))
        everyone_asked.wait()
        command = reply.last_user_text(body).split("Bash tool: ", 1)[1]
        return reply.tool_use("Bash", {"command": command})

    return reply.dynamic(answer)


def test_many_sessions_each_see_their_own_folder_and_env(tmp_path: Path) -> None:
    # Five: ScriptedServer listens with socketserver's backlog of 5; more simultaneous
    # connects get dropped and retried by the kernel a second later (slow, not wrong).
    count = 5
    root = tmp_path / "runs"
    with ScriptedServer(default=_many_sessions_model(count)) as server:
        proc = run_example(server, tmp_path, "many_sessions.py", str(count), str(root))
        bodies = message_requests(server)
    out = proc.stdout
    assert len(bodies) == 2 * count
    assert f"{count} sessions in" in out
    assert "each saw only its own folder and environment" in out
    assert "BAD" not in out
    assert "this process: cwd unchanged and SESSION_NAME unset: True" in out
    for i in range(1, count + 1):
        name = f"agent-{i:02d}"
        line = next(ln for ln in out.splitlines() if ln.startswith(f"ok  {name} "))
        # The session's own Bash output: its folder, its variable, its file.
        assert f"{root / name} name={name} I am {name}" in line, line
        assert "[success]" in line


@pytest.mark.parametrize("name", ["one_shot.py", "multi_turn.py", "custom_tool.py",
                                  "permission_callback.py", "hook.py", "many_sessions.py",
                                  "offline.py"])
def test_example_has_a_docstring_saying_how_to_run_it(name: str) -> None:
    source = (EXAMPLES / name).read_text()
    assert source.startswith('"""')
    assert f"examples/{name}" in source.split('"""')[1]
    assert "ANTHROPIC_BASE_URL" in source.split('"""')[1]
