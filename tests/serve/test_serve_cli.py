"""`wisp serve`'s command line: a wrong store or role is a clear error and exit 1, before
anything listens (the real process, no server started)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(("args", "says"), [
    (["--role", "worker", "--store", "sqlite:{tmp}/a.db"], "need a postgresql:// --store"),
    (["--role", "api", "--store", "sqlite:{tmp}/a.db"], "need a postgresql:// --store"),
    (["--role", "api"], "need a postgresql:// --store"),  # the default store is SQLite
    (["--store", "mysql://db/x"], "--store must be sqlite:PATH or postgresql://"),
    (["--store", "postgresql:db"], "--store must be sqlite:PATH or postgresql://"),
])
def test_a_wrong_store_or_role_is_refused_with_the_reason(tmp_path: Path, args: list[str],
                                                          says: str) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run([sys.executable, "-m", "wisp", "serve", *argv], text=True, check=False,
                          capture_output=True, timeout=30,
                          env={"HOME": str(tmp_path), "WISP_CONFIG_DIR": str(tmp_path),
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done
    assert says in done.stderr and done.stdout == ""
    assert not list(tmp_path.rglob("*.db"))  # nothing was opened


def test_an_unknown_role_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "wisp", "serve", "--role", "scheduler"],
                          text=True, capture_output=True, timeout=30, check=False,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    # Exit 1 and one line, as every usage error of wisp's (argparse alone exits 2).
    assert done.returncode == 1
    assert done.stderr.startswith("error: argument --role: invalid choice: 'scheduler'")
    assert done.stderr.count("\n") == 1
