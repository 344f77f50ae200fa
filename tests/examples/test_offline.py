"""`examples/offline.py` runs every example without a key, as a newcomer runs it.

Each test starts `python examples/offline.py NAME` as a real subprocess with a fresh HOME
and no ANTHROPIC_* variables: the program starts its own scripted model server, runs the
example against it in a temporary folder, and the assertions are on what the example
printed (its tools, hooks and callbacks ran for real) and on the exit code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from wisp.testing import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_", "OPENAI_"))}
    return {**env, "HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp")}


def offline(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, str(EXAMPLES / "offline.py"), *args],
                          cwd=tmp_path, env=clean_env(home), capture_output=True, text=True,
                          timeout=90, check=False)


def succeeded(tmp_path: Path, name: str) -> str:
    proc = offline(tmp_path, name)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def test_it_has_a_script_for_every_example(tmp_path: Path) -> None:
    proc = offline(tmp_path)
    assert proc.returncode == 0
    listed = proc.stdout.split("examples: ", 1)[1].strip().split(", ")
    on_disk = {p.stem for p in EXAMPLES.glob("*.py")} - {"offline"}
    assert sorted(listed) == sorted(on_disk)


def test_an_unknown_name_is_refused_with_the_list(tmp_path: Path) -> None:
    proc = offline(tmp_path, "nosuch")
    assert proc.returncode == 2
    assert "no offline script for 'nosuch'; examples: one_shot," in proc.stderr


def test_one_shot(tmp_path: Path) -> None:
    lines = succeeded(tmp_path, "one_shot").splitlines()
    assert lines[0] == "Paris: it is famous for the Eiffel Tower and the Louvre."
    assert "result: success" in lines and "turns: 1" in lines


def test_multi_turn(tmp_path: Path) -> None:
    out = succeeded(tmp_path, "multi_turn")
    assert "[turn 1] claude: Lisbon\n" in out
    assert "[turn 3] claude: The Belém Tower, on the bank of the Tagus." in out
    assert "turns: 3" in out


def test_custom_tool_runs_the_functions(tmp_path: Path) -> None:
    out = succeeded(tmp_path, "custom_tool")
    assert "[calc] add(12.5, 7.5) = 20" in out
    assert "[calc] multiply(20, 3) = 60" in out
    assert "answer: (12.5 + 7.5) * 3 = 60." in out
    assert "done: success, 3 turns" in out


def test_permission_callback_refuses_the_write_outside(tmp_path: Path) -> None:
    out = succeeded(tmp_path, "permission_callback")
    folder = out.splitlines()[0].removeprefix("working folder: ")
    assert "[permission] allow Write summary.txt, with a header added" in out
    assert re.search(r"\[permission\] deny Write \S+/outside-summary.txt: outside "
                     + re.escape(folder), out)
    assert f"files in {folder}: ['notes.txt', 'summary.txt']" in out
    assert "outside-summary.txt exists outside the folder: False" in out
    assert not Path(folder).exists()  # the temporary folder is cleaned up


def test_hook_blocks_the_wipe(tmp_path: Path) -> None:
    out = succeeded(tmp_path, "hook")
    assert "[PreToolUse] BLOCKED (recursive or forced rm): rm -rf ./*" in out
    assert "[PostToolUse] Bash 'ls' -> hello.txt" in out
    assert re.search(r"files left in \S+: \['hello.txt', 'keep-me.txt'\]", out)


def test_many_sessions_each_see_their_own_folder(tmp_path: Path) -> None:
    out = succeeded(tmp_path, "many_sessions")
    root = out.splitlines()[0].removeprefix("5 sessions under ")
    for i in range(1, 6):
        name = f"agent-{i:02d}"
        assert f"ok  {name} [success] cwd={root}/{name}: {root}/{name} name={name} " \
               f"I am {name}" in out
    assert "each saw only its own folder and environment" in out


def test_many_sessions_says_when_the_model_never_ran_the_command(tmp_path: Path) -> None:
    count = 2
    # The echo model of `python -m wisp.testing.server` only talks: the example must say
    # that isolation was not checked, not that it failed.
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer(default=reply.echo()) as server:
        env = {**clean_env(home), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "x"}
        proc = subprocess.run(
            [sys.executable, str(EXAMPLES / "many_sessions.py"), str(count),
             str(tmp_path / "runs")], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=90, check=False)
    assert proc.returncode == 1
    assert "BAD" not in proc.stdout
    assert f"{count} sessions in " in proc.stdout
    assert "the model never ran the command, so isolation was not checked" in proc.stdout
    assert "`python examples/offline.py many_sessions`" in proc.stdout
