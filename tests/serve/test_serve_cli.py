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


def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wisp", "serve", *args], text=True,
                          capture_output=True, timeout=30, check=False,
                          env={"HOME": str(tmp_path), "WISP_CONFIG_DIR": str(tmp_path),
                               "PATH": "/usr/bin:/bin"})


def test_a_busy_port_is_one_line_suggesting_port_0(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve(tmp_path, "--port", str(port))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"wisp serve: port {port} on 127.0.0.1 is in use; "
                           "try --port 0 for a free one\n")
    assert not list(tmp_path.rglob("*.db"))  # found before the store was opened


@pytest.mark.parametrize(("args", "says"), [
    (["--prot", "8080"], "error: unknown option '--prot'\n(Did you mean --port?)\n"),
    (["--stor=sqlite:x.db"], "error: unknown option '--stor'\n(Did you mean --store?)\n"),
    (["--po", "8080"], "error: unknown option '--po'\n(Did you mean --port?)\n"),  # no prefixes
    (["8080"], "error: unexpected argument '8080'\n"),
])
def test_a_mistyped_serve_option_names_the_closest(tmp_path: Path, args: list[str],
                                                   says: str) -> None:
    done = serve(tmp_path, *args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", says)


def test_serve_has_its_own_help(tmp_path: Path) -> None:
    done = serve(tmp_path, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: wisp serve")
    for what in ("--port", "default 0: any free port", "--store", "--role",
                 "WISP_SERVE_API_KEYS", "wisp serve --port 8080"):
        assert what in done.stdout
