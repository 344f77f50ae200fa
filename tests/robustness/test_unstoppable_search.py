"""A search that backtracks without end neither stalls wisp nor outlives it.

Before: Grep's Python engine ran `re` in a thread of wisp itself; `(a+)+$` against long
lines of `a`s held the GIL inside one C call, and `wisp -p` ignored SIGTERM and SIGINT
until killed. Now ripgrep (linear time) runs the search, and where there is no ripgrep
Python's engine runs in a child process that a signal ends with wisp.

Both engines run here against the real `wisp -p`: the bundled `rg`, and the child engine
(`USE_BUILTIN_RIPGREP=0` with no `rg` on PATH).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Runner
from tests.robustness.helpers import STREAM, model_requests
from wisp.testing import reply

CATASTROPHIC = "(a+)+$"
# Each line takes Python's `re` about 2**40 steps; ripgrep answers at once.
BIG_FILE = ("a" * 40 + "!\n") * 20_000
NO_RG_PATH = "/usr/bin:/bin"
CHILD_ENGINE = {"USE_BUILTIN_RIPGREP": "0", "PATH": NO_RG_PATH}
WISP_SCRIPT = Path(sys.executable).parent / "wisp"


def wait_for(predicate, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def cpu_seconds(pid: int) -> float:
    """User and system CPU time `pid` has used (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workers_of(parent: int) -> list[int]:
    """Pids of Grep's child engine started by `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == parent and b"_grep_worker" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def big_file(wisp: Runner) -> Path:
    path = wisp.cwd / "big.txt"
    path.write_text(BIG_FILE)
    return path


def test_no_rg_on_the_child_engines_path():
    """The premise of the child-engine cases: with this PATH no `rg` is found."""
    assert shutil.which("rg", path=NO_RG_PATH) is None


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.usefixtures("big_file")
def test_a_signal_ends_wisp_promptly_during_a_catastrophic_python_search(wisp, server, sig):
    server.script(reply.tool_use("Grep", {"pattern": CATASTROPHIC, "output_mode": "content"}),
                  reply.text("never"))
    proc = wisp.spawn("-p", "search", *STREAM, env=CHILD_ENGINE)
    try:
        assert wait_for(lambda: workers_of(proc.pid)), "the child engine never started"
        workers = workers_of(proc.pid)
        # Well into the backtracking: the engine has spent CPU time on it.
        assert wait_for(lambda: sum(cpu_seconds(pid) for pid in workers) >= 0.3), workers
        assert all(alive(pid) for pid in workers), "the search ended by itself"
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # The search itself would run for hours; 5 s is wide enough for a loaded 2-core machine.
    assert took < 5.0, f"wisp took {took:.2f}s to end after {sig.name}\n{err[-2000:]}"
    result = json.loads(out.strip().splitlines()[-1])
    assert result["type"] == "result" and result["subtype"] == "error_during_execution"
    assert wait_for(lambda: not any(alive(pid) for pid in workers), timeout=5), workers
    assert len(model_requests(server)) == 1  # the model never got a half-done search


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("big_file", "rg")
def test_ripgrep_answers_the_same_pattern_at_once(wisp, server):
    server.script(reply.tool_use("Grep", {"pattern": CATASTROPHIC, "output_mode": "count"}),
                  reply.tool_use("Grep", {"pattern": "a!$", "output_mode": "count"}),
                  reply.text("counted"))
    started = time.monotonic()
    run = wisp("-p", "count", *STREAM, timeout=30)
    assert run.returncode == 0, run.stderr[-2000:]
    assert time.monotonic() - started < 10
    results = [m["content"][0] for r in model_requests(server)[1:]
               for m in r["messages"][-1:]]
    # `(a+)+$` needs the line to end in `a`: none does. `a!$` matches every line.
    assert "No matches found" in results[0]["content"], results[0]
    assert f"{wisp.cwd / 'big.txt'}:20000" in results[1]["content"], results[1]


@pytest.mark.timeout(60)
def test_the_child_engine_finds_what_ripgrep_finds(wisp, server):
    (wisp.cwd / "a.txt").write_text("alpha\nneedle one\n")
    (wisp.cwd / "b.txt").write_text("needle two\n")
    server.script(reply.tool_use("Grep", {"pattern": "needle", "output_mode": "content"}),
                  reply.text("found"))
    run = wisp("-p", "find", *STREAM, env=CHILD_ENGINE, timeout=30)
    assert run.returncode == 0, run.stderr[-2000:]
    block = model_requests(server)[1]["messages"][-1]["content"][0]
    assert not block.get("is_error"), block
    assert block["content"].splitlines() == [f"{wisp.cwd / 'a.txt'}:2:needle one",
                                             f"{wisp.cwd / 'b.txt'}:1:needle two"]


@pytest.mark.skipif(not WISP_SCRIPT.exists(), reason="no `wisp` console script installed")
def test_the_child_engine_does_not_import_from_the_working_folder(wisp, server):
    """`python -I`: a repository's own `wisp` package is not what the child runs. (The
    console script, not `python -m wisp`, which would itself import the planted one.)"""
    planted = wisp.cwd / "wisp" / "tools"
    planted.mkdir(parents=True)
    for folder in (wisp.cwd / "wisp", planted):
        (folder / "__init__.py").write_text("")
    marker = wisp.cwd.parent / "planted-ran"
    (planted / "_grep_worker.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (wisp.cwd / "x.txt").write_text("needle\n")
    server.script(reply.tool_use("Grep", {"pattern": "needle"}), reply.text("ok"))
    run = subprocess.run([str(WISP_SCRIPT), "-p", "find"], cwd=wisp.cwd, capture_output=True,
                         text=True, env={**wisp.env, **CHILD_ENGINE}, timeout=30, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert not marker.exists()
    block = model_requests(server)[1]["messages"][-1]["content"][0]
    assert str(wisp.cwd / "x.txt") in block["content"], block
