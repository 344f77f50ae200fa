"""`python -m wisp.testing.server` and its script-file format."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wisp
from wisp.errors import RetryableAPIError
from wisp.models.accumulate import fold
from wisp.models.anthropic import AnthropicConfig, AnthropicModel
from wisp.models.base import ModelRequest
from wisp.testing._cli import from_json
from wisp.testing.reply import CutReply, DynamicReply, ErrorReply, MessageReply, RawReply


async def ask(url: str, prompt: str) -> dict[str, object]:
    model = AnthropicModel(AnthropicConfig(base_url=url))
    request = ModelRequest("m", [{"role": "user", "content": prompt}], 10)
    async with model.stream(request) as stream:
        return fold([event async for event in stream])


def test_the_cli_serves_a_script_then_echoes(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"text": "hi"},
                {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
                {"error": {"status": 529, "message": "overloaded"}},
            ]
        )
    )
    src = str(Path(wisp.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wisp.testing.server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first_line = proc.stdout.readline()
        url = first_line.split()[-1]
        assert url.startswith("http://127.0.0.1:")
        first = asyncio.run(ask(url, "x"))
        assert first["content"] == [{"type": "text", "text": "hi"}]
        second = asyncio.run(ask(url, "x"))
        assert second["stop_reason"] == "tool_use"
        with pytest.raises(RetryableAPIError, match="overloaded"):
            asyncio.run(ask(url, "x"))
        fourth = asyncio.run(ask(url, "are you there"))
        assert fourth["content"] == [{"type": "text", "text": "echo: are you there"}]
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert "RuntimeWarning" not in stderr
    assert "POST /v1/messages" in stderr  # requests are logged unless --quiet


def test_a_bad_script_file_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('[{"nonsense": 1}]')
    src = str(Path(wisp.__file__).parents[1])
    proc = subprocess.run(
        [sys.executable, "-m", "wisp.testing.server", "--script", str(script)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=30,
    )
    assert proc.returncode == 1  # as every usage error of wisp's (argparse alone exits 2)
    assert "unknown reply kind 'nonsense'" in proc.stderr


def test_script_entries() -> None:
    assert isinstance(from_json({"text": "hi"}), MessageReply)
    assert isinstance(from_json({"echo": True}), DynamicReply)
    assert isinstance(from_json({"malformed": None}), RawReply)
    assert from_json({"error": {"status": 529, "message": "m"}}) == ErrorReply(529, "m")
    cut = from_json({"cut": {"after_events": 3, "base": {"text": "abc"}}})
    assert isinstance(cut, CutReply) and isinstance(cut.base, MessageReply)
    assert isinstance(from_json({"tool_uses": [["A", {}], ["B", {"x": 1}]]}), MessageReply)
    assert isinstance(
        from_json({"message": {"blocks": [{"type": "text", "text": "t"}]}}), MessageReply
    )
    for bad in ({}, {"text": "a", "error": {}}, ["text"]):
        with pytest.raises(ValueError):
            from_json(bad)


# The command line: a free port by default, a busy one in one line, and the form that
# runs one command against the server.

def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "wisp.testing.server", *args]


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No key or base URL of the caller's: the server's own must be what the command sees."""
    src = str(Path(wisp.__file__).parents[1])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_", "WISP_"))}
    return {**env, "PYTHONPATH": src, "HOME": str(tmp_path), **extra}


def first_line_url(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(server_command("--quiet"), stdout=subprocess.PIPE, text=True,
                            env=clean_env(tmp_path))
    assert proc.stdout is not None
    return proc, proc.stdout.readline().split()[-1]


def test_by_default_it_takes_a_free_port_and_prints_it(tmp_path: Path) -> None:
    one, url_one = first_line_url(tmp_path)
    two, url_two = first_line_url(tmp_path)  # would collide on a fixed default port
    try:
        assert url_one.startswith("http://127.0.0.1:") and url_two != url_one
        reply_one = asyncio.run(ask(url_one, "one"))
        assert reply_one["content"] == [{"type": "text", "text": "echo: one"}]
    finally:
        for proc in (one, two):
            proc.terminate()
            proc.communicate(timeout=10)


def test_a_busy_port_is_one_line_suggesting_port_0(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(server_command("--port", str(port)), capture_output=True,
                              text=True, timeout=30, check=False, env=clean_env(tmp_path))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"python -m wisp.testing.server: port {port} on 127.0.0.1 is in "
                           "use; try --port 0 for a free one\n")


def test_help_and_a_mistyped_option(tmp_path: Path) -> None:
    shown = subprocess.run(server_command("--help"), capture_output=True, text=True,
                           timeout=30, check=True, env=clean_env(tmp_path))
    assert "[-- command ...]" in shown.stdout
    assert "python -m wisp.testing.server -- wisp -p hello" in shown.stdout
    wrong = subprocess.run(server_command("--scirpt", "x.json"), capture_output=True,
                           text=True, timeout=30, check=False, env=clean_env(tmp_path))
    assert (wrong.returncode, wrong.stderr) == (
        1, "error: unknown option '--scirpt'\n(Did you mean --script?)\n")


def test_it_runs_wisp_offline_and_stops(tmp_path: Path) -> None:
    """The README's quick start, as pasted: no key, no base URL."""
    done = subprocess.run(server_command("--", sys.executable, "-m", "wisp", "-p", "hello"),
                          capture_output=True, text=True, timeout=60, check=False,
                          env=clean_env(tmp_path), cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "echo: hello\n", "")


def test_wisp_runs_from_an_unactivated_virtual_environment(tmp_path: Path) -> None:
    """`.venv/bin/python -m wisp.testing.server -- wisp -p hello` with .venv/bin not on
    PATH: the console script beside the interpreter is the one run."""
    if not (Path(sys.executable).parent / "wisp").exists():
        pytest.skip("wisp is not installed as a console script beside this interpreter")
    done = subprocess.run(server_command("--", "wisp", "-p", "hello"), capture_output=True,
                          text=True, timeout=60, check=False, cwd=tmp_path,
                          env=clean_env(tmp_path, PATH="/usr/bin:/bin"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "echo: hello\n", "")


def test_the_script_answers_the_command(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "scripted answer"}]))
    done = subprocess.run(
        server_command("--script", str(script), "--", sys.executable, "-m", "wisp", "-p", "x"),
        capture_output=True, text=True, timeout=60, check=False, env=clean_env(tmp_path),
        cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "scripted answer\n")


SHOW_ENV = 'echo "$ANTHROPIC_BASE_URL $OPENAI_BASE_URL $ANTHROPIC_API_KEY $OPENAI_API_KEY"'


def test_the_command_gets_the_urls_and_dummy_keys_and_its_status_is_returned(
        tmp_path: Path) -> None:
    done = subprocess.run(server_command("--", "sh", "-c", f"{SHOW_ENV}; exit 7"),
                          capture_output=True, text=True, timeout=30, check=False,
                          env=clean_env(tmp_path))
    assert done.returncode == 7
    base, openai, key, openai_key = done.stdout.split()
    assert base.startswith("http://127.0.0.1:") and openai == f"{base}/v1"
    assert (key, openai_key) == ("test", "test")
    kept = subprocess.run(server_command("--", "sh", "-c", SHOW_ENV), capture_output=True,
                          text=True, timeout=30, check=True,
                          env=clean_env(tmp_path, ANTHROPIC_API_KEY="mine",
                                        OPENAI_API_KEY="also-mine"))
    assert kept.stdout.split()[2:] == ["mine", "also-mine"]


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run(server_command("--", "no-such-command-here"), capture_output=True,
                          text=True, timeout=30, check=False, env=clean_env(tmp_path))
    assert done.returncode == 127
    assert done.stderr == ("python -m wisp.testing.server: cannot run no-such-command-here: "
                           "No such file or directory\n")
    empty = subprocess.run(server_command("--"), capture_output=True, text=True, timeout=30,
                           check=False, env=clean_env(tmp_path))
    assert (empty.returncode, empty.stderr) == (1, "error: no command after --\n")


def test_a_termination_reaches_the_command_and_nothing_it_started_outlives_it(
        tmp_path: Path) -> None:
    import signal

    script = ('trap "echo got TERM; exit 3" TERM; sleep 300 & echo "$!"; '
              "while :; do sleep 0.05; done")
    proc = subprocess.Popen(server_command("--", "sh", "-c", script), stdout=subprocess.PIPE,
                            text=True, env=clean_env(tmp_path))
    assert proc.stdout is not None
    background = int(proc.stdout.readline())
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (3, "got TERM\n")
    assert not alive(background)


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody has reaped yet."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_an_interactive_command_owns_the_terminal(tmp_path: Path) -> None:
    """Started from a terminal, the command reads it (it would be stopped by SIGTTIN if
    its process group were left in the background)."""
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(sys.executable, server_command("--", "sh", "-c",
                                                         'read line; echo "got $line"')[1:],
                          env=clean_env(tmp_path), encoding="utf-8", timeout=20)
    try:
        child.sendline("typed")
        child.expect("got typed")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
