"""Driving the real `wisp` UI in a real terminal: tmux.

Each `Terminal` is its own tmux server (a private socket), so tests run in parallel. The
command runs under `sh`, which records wisp's exit status in a file when it ends, and the
pane stays open so the screen can still be read. Everything is waited for by polling the
pane, never by sleeping a fixed time.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import base_env
from wisp.settings.trust import config_file, record
from wisp.testing import ScriptedServer
from wisp.testing.server import RecordedRequest

POLL_S = 0.02


class Terminal:
    def __init__(self, cwd: Path, env: dict[str, str], width: int = 100, height: int = 30
                 ) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is needed for the terminal UI tests (.ci/run installs it)")
        self.socket = f"wisp-test-{uuid.uuid4().hex[:12]}"
        self.cwd = cwd
        self.env = env
        self.width, self.height = width, height
        self.status_file = cwd.parent / f"exit-{self.socket}"

    def tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, check=False, env={**os.environ, "TMUX": ""})
        if check and proc.returncode != 0:
            raise RuntimeError(f"tmux {args}: {proc.stderr}")
        return proc.stdout

    def start(self, *wisp_args: str, env: dict[str, str] | None = None,
              stdout_pipe: bool = False) -> Terminal:
        """`stdout_pipe`: wisp's stdout goes through `cat` (stdin stays the terminal)."""
        argv = [sys.executable, "-m", "wisp", *wisp_args]
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in {**self.env, **(env or {})
                                                                 }.items())
        run = (f"env -i {exports} {shlex.join(argv)} "
               f"2>{shlex.quote(str(self.cwd.parent / 'stderr.txt'))}; "
               f"echo $? > {shlex.quote(str(self.status_file))}")
        if stdout_pipe:
            run = f"{{ {run}; }} | cat"
        script = f"cd {shlex.quote(str(self.cwd))} && {run}; sleep 600"
        self.tmux("-f", "/dev/null", "new-session", "-d", "-x", str(self.width), "-y",
                  str(self.height), "sh", "-c", script)
        self.tmux("set-option", "-g", "history-limit", "100000")
        return self

    # Keys --------------------------------------------------------------------------------

    def keys(self, *keys: str) -> None:
        """tmux key names: "Enter", "Escape", "C-c", "BTab" (shift+tab), "Up", ..."""
        self.tmux("send-keys", "-t", "0", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "0", "-l", text)

    def submit(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def paste(self, text: str) -> None:
        """A bracketed paste, as a terminal sends one."""
        self.tmux("set-buffer", "--", text)
        self.tmux("paste-buffer", "-p", "-t", "0")

    def resize(self, width: int, height: int) -> None:
        self.tmux("resize-window", "-t", "0", "-x", str(width), "-y", str(height))

    # Reading -----------------------------------------------------------------------------

    def screen(self, colors: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if colors else []), "-t", "0")

    def scrollback(self) -> str:
        """Everything: tmux's history plus the screen."""
        return self.tmux("capture-pane", "-p", "-S", "-", "-t", "0")

    def wait_for(self, pattern: str, timeout: float = 10, *, where: str = "screen") -> str:
        """Waits until `pattern` (a regex) is on the screen (or in the scrollback);
        returns that text. Fails with the screen in the message."""
        read: Callable[[], str] = self.screen if where == "screen" else self.scrollback
        deadline = time.monotonic() + timeout
        while True:
            text = read()
            if re.search(pattern, text, re.MULTILINE):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {pattern!r}; screen:\n{text}\n"
                            f"stderr:\n{self.stderr()}")
            time.sleep(POLL_S)

    def wait_gone(self, pattern: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if not re.search(pattern, text, re.MULTILINE):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"{pattern!r} still on screen:\n{text}")
            time.sleep(POLL_S)

    def ready(self, timeout: float = 10) -> str:
        """The input line is shown, idle (no spinner)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if re.search(r"^❯( |$)", text, re.MULTILINE) and "Working…" not in text:
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"UI never became ready; screen:\n{text}\nstderr:\n"
                            f"{self.stderr()}")
            time.sleep(POLL_S)

    def exit_status(self, timeout: float = 10) -> int:
        deadline = time.monotonic() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().strip():
            if time.monotonic() > deadline:
                pytest.fail(f"wisp did not exit; screen:\n{self.screen()}")
            time.sleep(POLL_S)
        return int(self.status_file.read_text())

    def stderr(self) -> str:
        path = self.cwd.parent / "stderr.txt"
        return path.read_text(errors="replace") if path.exists() else ""

    def wisp_pid(self) -> int | None:
        """The pid of wisp in the pane (the child of the pane's shell)."""
        shell = self.tmux("display-message", "-p", "-t", "0", "#{pane_pid}").strip()
        out = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True,
                             check=False).stdout.split()
        return int(out[0]) if out else None

    def close(self) -> None:
        self.tmux("kill-server", check=False)


class TuiSetup:
    """A scripted server, a project folder and a home for one test."""

    def __init__(self, server: ScriptedServer, tmp_path: Path) -> None:
        self.server = server
        self.cwd = tmp_path / "project"
        self.cwd.mkdir()
        self.home = tmp_path / "home"
        self.home.mkdir()
        env = base_env(server, self.home)
        keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
                "VIRTUAL_ENV", "SYSTEMROOT")
        self.env = {k: v for k, v in env.items()
                    if k.startswith(("ANTHROPIC_", "WISP_", "CLAUDE_")) or k in keep}
        self.env.update({"HOME": str(self.home), "TERM": "xterm-256color",
                         "LANG": os.environ.get("LANG") or "C.UTF-8"})
        self._terminals: list[Terminal] = []
        # The user has trusted this project before (the UI would ask first otherwise):
        # tests of the trust dialog itself call `distrust`.
        record(self.cwd, self.env, hasTrustDialogAccepted=True)

    def distrust(self) -> None:
        """Forgets every answer recorded in the user's config (trust, memory imports)."""
        config_file(self.env).unlink(missing_ok=True)

    def terminal(self, *args: str, width: int = 100, height: int = 30,
                 env: dict[str, str] | None = None, stdout_pipe: bool = False,
                 cwd: Path | None = None) -> Terminal:
        """wisp in a new terminal, in the project (or `cwd`), closed with the setup."""
        term = Terminal(cwd or self.cwd, {**self.env, **(env or {})}, width, height).start(
            *args, stdout_pipe=stdout_pipe)
        self._terminals.append(term)
        return term

    def close(self) -> None:
        for term in self._terminals:
            term.close()


@contextmanager
def tui_setup(tmp_path: Path) -> Iterator[TuiSetup]:
    with ScriptedServer() as server:
        setup = TuiSetup(server, tmp_path)
        try:
            yield setup
        finally:
            setup.close()


def message_requests(tui: TuiSetup) -> list[RecordedRequest]:
    """The Messages API requests the server got (not count_tokens, probes or the like)."""
    return [r for r in tui.server.requests
            if r.method == "POST" and r.path.partition("?")[0].rstrip("/").endswith(
                "/v1/messages")]


def wait_requests(tui: TuiSetup, n: int, timeout: float = 15) -> list[RecordedRequest]:
    deadline = time.monotonic() + timeout
    while True:
        found = message_requests(tui)
        if len(found) >= n:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"expected {n} model requests, got {len(found)}")
        time.sleep(POLL_S)
