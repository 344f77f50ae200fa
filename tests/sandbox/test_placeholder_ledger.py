"""The placeholder ledger: whatever a killed wisp process made at a protected path, the
next session removes, and nothing else (issue 24: no file left behind on the host)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from wisp.sandbox import placeholders

# Runs in a child: takes a placeholder, and is SIGKILLed by its own hand at the worst
# moment, after the file exists and before its inode reaches the ledger.
_KILLED_MID_ACQUIRE = """
import os, signal, sys
from wisp.sandbox import placeholders
placeholders.LEDGER[:] = [sys.argv[1]]
real_fstat = os.fstat
def fstat_then_die(fd):
    os.kill(os.getpid(), signal.SIGKILL)
    return real_fstat(fd)
os.fstat = fstat_then_die
placeholders.acquire(sys.argv[2])
"""


def test_a_process_killed_between_creating_and_noting_leaves_nothing(tmp_path: Path):
    ledger, placeholder = tmp_path / "placeholders-1", tmp_path / ".envrc"
    child = subprocess.run([sys.executable, "-c", _KILLED_MID_ACQUIRE, str(ledger),
                            str(placeholder)], check=False)
    assert child.returncode == -9
    assert placeholder.exists()  # the dead process had no chance to remove it
    placeholders.remove_listed(str(ledger))
    assert not placeholder.exists() and not ledger.exists()


def test_a_users_file_at_a_pending_path_is_kept(tmp_path: Path):
    """A pending line names a path, not a file: what is there now is removed only if it
    is an empty file with a placeholder's mode."""
    empty, full, dev_null_like = tmp_path / ".envrc", tmp_path / ".mcp.json", tmp_path / "x"
    empty.write_text("")
    full.write_text("{}")
    dev_null_like.write_text("")
    os.chmod(dev_null_like, 0)
    ledger = tmp_path / "placeholders-2"
    ledger.write_text("".join(f"- - {p}\n" for p in (empty, full, dev_null_like)))
    placeholders.remove_listed(str(ledger))
    assert empty.exists() and full.read_text() == "{}"
    assert not dev_null_like.exists()


def test_a_noted_inode_is_removed_only_if_it_is_still_that_file(tmp_path: Path):
    ledger = tmp_path / "placeholders-3"
    placeholders.LEDGER[:] = [str(ledger)]
    try:
        kept, gone = str(tmp_path / ".claude"), str(tmp_path / ".mcp.json")
        assert placeholders.acquire(kept) and placeholders.acquire(gone)
        placeholders._HELD.clear()  # as if this process had died
        users = tmp_path / "users"  # made while the placeholder exists: another inode
        users.write_text("")
        os.chmod(users, 0)
        os.replace(users, kept)
    finally:
        placeholders.LEDGER[:] = []
    placeholders.remove_listed(str(ledger))
    assert os.path.exists(kept) and not os.path.exists(gone)
