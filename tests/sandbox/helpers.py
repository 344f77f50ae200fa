"""A session's sandbox built in this process, and one command run in it for real."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wisp.rules import Rule
from wisp.sandbox.config import SandboxConfig
from wisp.sandbox.runner import CommandSandbox
from wisp.sandbox.session import build_sandbox


def make_sandbox(work: Path, home: Path, *, deny: Sequence[str] = (),
                 env: dict[str, str] | None = None, **settings: Any) -> CommandSandbox:
    config = SandboxConfig()
    config.enabled = True
    for key, value in settings.items():
        setattr(config, key, value)
    rules = [Rule.parse(text) for text in deny]
    full_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
                "WISP_CONFIG_DIR": str(home / ".wisp"), **(env or {})}
    return build_sandbox(config, cwd=work, working=[str(work)], env=full_env,
                         allow=lambda: [], deny=lambda: rules)


def run(sandbox: CommandSandbox, command: str, cwd: Path, *, timeout: float = 60,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`command` through `bash -c` in the sandbox, as the Bash tool launches it."""
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": sandbox.profile.home, **(env or {})}
    launch = sandbox.launch(["/bin/bash", "-c", command], base, str(cwd))
    try:
        return subprocess.run(launch.argv, env=launch.env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, start_new_session=True,
                              pass_fds=launch.pass_fds, check=False)
    finally:
        launch.release()


def gone(marker: str, deadline_s: float = 5.0) -> bool:
    """Whether no process with `marker` in its command line is left, waiting up to the
    deadline for a teardown in progress."""
    end = time.monotonic() + deadline_s
    while True:
        alive = [pid for pid in os.listdir("/proc") if pid.isdigit()
                 and marker.encode() in _cmdline(pid)]
        if not alive:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.02)


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
