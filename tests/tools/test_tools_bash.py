from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.tools.conftest import Caller, process_gone, wait_until
from wisp.processes.output import CappedText, clip
from wisp.tools.base import ToolContext, ToolResult
from wisp.tools.bash import Bash, last_program, timeout_ms


def test_echo_round_trip(call: Caller) -> None:
    result = call(Bash(), {"command": "echo hello world"})
    assert not result.is_error
    assert result.content == "hello world"
    assert result.data == {
        "stdout": "hello world",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }


def test_stdout_then_stderr_then_exit_code(call: Caller) -> None:
    result = call(Bash(), {"command": "echo out; echo err >&2; exit 3"})
    assert result.is_error
    assert result.content == "out\nerr\nExit code 3"
    assert result.data["stdout"] == "out"
    assert result.data["stderr"] == "err"


def test_nonzero_exit_is_an_error(call: Caller) -> None:
    result = call(Bash(), {"command": "false"})
    assert result.is_error
    assert result.content == "Exit code 1"


def test_grep_without_match_gets_an_interpretation(call: Caller) -> None:
    result = call(Bash(), {"command": "echo abc | grep zzz"})
    assert result.data["returnCodeInterpretation"] == "No matches found"


def test_no_output(call: Caller) -> None:
    result = call(Bash(), {"command": "true"})
    assert not result.is_error
    assert result.content == "(no output)"


def test_runs_in_ctx_cwd_with_ctx_env(call: Caller, tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "WISP_PROBE": "probe-value"}
    result = call(Bash(), {"command": 'pwd; echo "$WISP_PROBE"'}, env=env)
    assert result.content == f"{tmp_path}\nprobe-value"


def test_stdin_is_not_inherited(call: Caller) -> None:
    result = call(Bash(), {"command": "cat; echo done"})
    assert result.content == "done"


def test_background_flag_is_accepted_and_noted(call: Caller) -> None:
    result = call(Bash(), {"command": "echo hi", "run_in_background": True})
    assert str(result.content).startswith("hi\n")
    assert "run_in_background" in str(result.content)


def test_huge_output_is_capped_with_bounded_memory(call: Caller) -> None:
    tracemalloc.start()
    try:
        result = call(Bash(), {"command": "yes | head -c 20000000; echo END"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text = str(result.content)
    assert not result.is_error
    assert len(text) <= 30_000
    assert text.startswith("y\ny\n")
    assert text.endswith("y\nEND")
    assert "characters truncated" in text
    # 20 MB went through the pipe; we must not have held anything like it.
    assert peak < 4_000_000


def test_output_cap_can_be_overridden(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "1000")
    result = call(Bash(), {"command": "seq 1 100000"})
    text = str(result.content)
    assert len(text) <= 1000
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("99999\n100000")


def test_timeout_is_clamped() -> None:
    assert timeout_ms(None) == 120_000
    assert timeout_ms(5_000) == 5_000
    assert timeout_ms(10**9) == 600_000
    assert timeout_ms(-1) == 120_000
    assert timeout_ms(True) == 120_000


def test_timeout_kills_the_whole_process_group(call: Caller, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    result = call(
        Bash(),
        {"command": f"sleep 300 & echo $! > {pidfile}; wait", "timeout": 1000},
    )
    assert time.monotonic() - started < 30
    assert result.is_error
    assert "Command timed out after 1s" in str(result.content)
    grandchild = int(pidfile.read_text())
    assert wait_until(lambda: process_gone(grandchild)), "grandchild sleep survived timeout"


def test_abort_kills_the_group_and_reports_interruption(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> tuple[ToolResult, int]:
        ctx = ToolContext(cwd=tmp_path)
        task = asyncio.create_task(
            Bash().run({"command": f"sleep 300 & echo $! > {pidfile}; wait"}, ctx)
        )
        deadline = time.monotonic() + 10
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline, "command never started"
            await asyncio.sleep(0.01)
        ctx.abort.set()
        result = await asyncio.wait_for(task, 10)
        assert len(ctx.processes) == 0
        return result, int(pidfile.read_text())

    result, grandchild = asyncio.run(main())
    assert result.is_error
    assert result.data["interrupted"] is True
    assert "interrupted" in str(result.content)
    assert wait_until(lambda: process_gone(grandchild)), "grandchild sleep survived abort"


def test_cancelling_the_call_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> int:
        ctx = ToolContext(cwd=tmp_path)
        task = asyncio.create_task(
            Bash().run({"command": f"sleep 300 & echo $! > {pidfile}; wait"}, ctx)
        )
        deadline = time.monotonic() + 10
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline, "command never started"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(ctx.processes) == 0
        return int(pidfile.read_text())

    grandchild = asyncio.run(main())
    assert wait_until(lambda: process_gone(grandchild))


def test_background_child_holding_the_pipe_does_not_hang(call: Caller, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    result = call(Bash(), {"command": f"sleep 300 & echo $! > {pidfile}; echo started"})
    assert time.monotonic() - started < 10
    assert not result.is_error
    assert result.content == "started"
    grandchild = int(pidfile.read_text())
    assert wait_until(lambda: process_gone(grandchild))


def test_shell_is_reaped_and_group_unregistered(tmp_path: Path) -> None:
    async def main() -> tuple[ToolResult, int]:
        ctx = ToolContext(cwd=tmp_path)
        result = await Bash().run({"command": "echo $$"}, ctx)
        return result, len(ctx.processes)

    result, registered = asyncio.run(main())
    assert registered == 0
    shell_pid = int(str(result.content))
    stat = Path(f"/proc/{shell_pid}/stat")
    # Either gone entirely or the pid was reused by a live process; never a zombie.
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_missing_cwd_is_an_error_result(call: Caller, tmp_path: Path) -> None:
    result = call(Bash(), {"command": "echo hi"}, cwd=tmp_path / "gone")
    assert result.is_error
    assert "Could not start" in str(result.content)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la && cat x | wc -l",
        "git status",
        "git log --oneline -5 | head -3",
        "grep -rn 'a > b' .",
        "find . -name '*.py'",
        "echo 'a; rm -rf /' | wc -c",
        "env",
        "pwd\nls",
    ],
)
def test_read_only_commands(command: str) -> None:
    assert Bash().is_read_only({"command": command})


@pytest.mark.parametrize(
    "command",
    [
        "echo x > f",
        "rm f",
        "echo $(rm f)",
        "ls; rm f",
        "echo `rm f`",
        "cat <(rm f)",
        "ls & rm f",
        "ls || rm f",
        "find . -delete",
        "find . -exec rm {} ;",
        "git push",
        "git branch -D main",
        "sort -o out in",
        "env rm f",
        "FOO=1 ls",
        "ls 'unterminated",
        'echo \\" > f \\"',
        "cat x >> y",
        "",
    ],
)
def test_not_read_only_commands(command: str) -> None:
    assert not Bash().is_read_only({"command": command})


def test_metadata() -> None:
    tool = Bash()
    assert tool.kind == "execute"
    assert tool.describe({"command": "ls", "description": "List files"}) == "List files: ls"
    assert tool.describe({"command": "ls"}) == "ls"


def test_already_aborted_call_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    async def main() -> ToolResult:
        ctx = ToolContext(cwd=tmp_path)
        ctx.abort.set()
        return await Bash().run({"command": f"touch {marker}"}, ctx)

    result = asyncio.run(main())
    assert result.is_error
    assert result.data["interrupted"] is True
    assert not marker.exists()


def test_cancelling_at_any_point_of_startup_leaves_nothing_behind(tmp_path: Path) -> None:
    # Cancel after 0, 1, 2, ... loop iterations to hit every await inside the spawn.
    async def attempt(k: int) -> None:
        ctx = ToolContext(cwd=tmp_path)
        command = f"sleep 300 & echo $! > gpid{k}; wait"
        task = asyncio.create_task(Bash().run({"command": command}, ctx))
        for _ in range(k):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)

    async def main() -> None:
        for k in range(16):
            await attempt(k)

    asyncio.run(main())
    for pidfile in tmp_path.glob("gpid*"):
        text = pidfile.read_text().strip()
        if text:
            pid = int(text)
            assert wait_until(lambda pid=pid: process_gone(pid)), pidfile.name


def test_capped_text_and_clip() -> None:
    text = CappedText(10)
    for chunk in ["abcdefghijklmnopqrstuvwxyz"] * 10:
        text.add(chunk)
    head, dropped, tail = text.segments()
    assert head == "abcdefghij"
    assert isinstance(tail, str)
    assert 10 <= len(tail) <= 20
    assert tail.endswith("xyz")
    assert dropped == 260 - 10 - len(tail)
    clipped, gone = clip(text.segments(), 1000)
    assert clipped.startswith("abcdefghij") and clipped.endswith("xyz")
    assert f"[{gone} characters truncated]" in clipped
    assert clip(["abc", "def"], 10) == ("abcdef", 0)
    head_only = CappedText(5, keep_tail=False)
    head_only.add("0123456789")
    assert head_only.segments() == ["01234", 5, ""]


@pytest.mark.parametrize(("command", "program"), [
    ("grep x f", "grep"),
    ("cat f | grep -q x", "grep"),
    ("cd sub && diff a b", "diff"),
    ("echo 'a; grep' | wc -l", "wc"),
    ("", ""),
])
def test_last_program_names_the_command_whose_status_the_line_returns(command: str,
                                                                      program: str) -> None:
    assert last_program(command) == program


def test_clipped_output_is_saved_whole_in_a_file_named_in_the_marker(
        call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "1000")
    result = call(Bash(), {"command": "seq 1 200000"})
    text = str(result.content)
    assert len(text) <= 1000
    match = re.search(r"all of it is in (\S+)\]", text)
    assert match is not None, text
    saved = Path(match.group(1)).read_text()
    assert saved == "".join(f"{n}\n" for n in range(1, 200001))


def test_short_output_writes_no_file(call: Caller) -> None:
    result = call(Bash(), {"command": "echo small"})
    assert "all of it is in" not in str(result.content)
