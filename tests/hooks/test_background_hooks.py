"""Hooks that go on in the background (`{"async": true}` as their first line, or
`"async": true` in settings): the event does not wait for them, and what they say when
they end reaches the model on its next request."""

from __future__ import annotations

import json

from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}
LATE = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                               "additionalContext": "LATE-CONTEXT"}}


def _settings(command: str, **extra: object) -> str:
    return json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": command, **extra}]}]}})


def _run(wisp, server, settings: str):
    server.script(reply.tool_use("Bash", {"command": "sleep 1.5"}), reply.text("done"))
    return wisp("-p", "go", "--output-format", "json", "--settings", settings,
                "--permission-mode", "bypassPermissions", env=SANDBOX)


def test_an_async_answer_lets_the_prompt_go_and_its_context_comes_later(wisp, server):
    command = (f"echo '{json.dumps({'async': True, 'asyncTimeout': 5000})}'; sleep 0.5; "
               f"echo '{json.dumps(LATE)}'")
    run = _run(wisp, server, _settings(command))
    assert run.returncode == 0, run.stderr
    first, second = (json.dumps(r.body["messages"]) for r in server.requests)
    assert "LATE-CONTEXT" not in first  # the prompt did not wait for the hook
    assert "LATE-CONTEXT" in second


def test_a_hook_configured_async_runs_in_the_background(wisp, server):
    run = _run(wisp, server, _settings(f"sleep 0.5; echo '{json.dumps(LATE)}'", **{
        "async": True}))
    assert run.returncode == 0, run.stderr
    first, second = (json.dumps(r.body["messages"]) for r in server.requests)
    assert "LATE-CONTEXT" not in first and "LATE-CONTEXT" in second


def test_a_background_hook_past_its_timeout_is_killed_and_says_nothing(wisp, server):
    command = (f"echo '{json.dumps({'async': True, 'asyncTimeout': 300})}'; sleep 5; "
               f"echo '{json.dumps(LATE)}'")
    run = _run(wisp, server, _settings(command))
    assert run.returncode == 0, run.stderr
    assert all("LATE-CONTEXT" not in json.dumps(r.body["messages"]) for r in server.requests)


def test_a_background_hook_still_running_at_exit_is_killed(wisp, server, tmp_path):
    pid_file = tmp_path / "hook.pid"
    command = (f"echo $$ > {pid_file}; "  # before its async line: written once it is read
               f"echo '{json.dumps({'async': True, 'asyncTimeout': 60000})}'; sleep 30")
    server.script(reply.text("done"))
    run = wisp("-p", "go", "--output-format", "json", "--settings", _settings(command))
    assert run.returncode == 0, run.stderr
    pid = int(pid_file.read_text())
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead too
        return stat.read().split()[2] != "Z"
