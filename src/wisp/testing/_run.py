"""`python -m wisp.testing.server -- <command…>`: run one command against the scripted
server, then stop it, exiting with the command's status.

Above: `wisp.testing._cli`, which starts the server and builds the environment. Below:
the command, in a process group of its own so that everything it starts ends with it.
When this process owns the terminal, the command's group gets it for as long as it runs,
so an interactive command (`wisp` itself, the terminal UI) reads keys and gets Ctrl-C as
it would when started by a shell; without a terminal, signals sent here are passed on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from types import FrameType

PROGRAM = "python -m wisp.testing.server"
_PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_STOP_GRACE_S = 1.0  # an orphan ended but not reaped by init waits this long


def run_command(command: list[str], env: dict[str, str]) -> int:
    """Runs `command` to its end; its exit status, 128+N when signal N ended it, and 127
    (126) when it cannot be found (run), as a shell says."""
    relay = _Relay()
    with relay.installed():  # before the command starts: no signal may slip between
        try:
            child = subprocess.Popen(command, env=env, process_group=0)
        except OSError as exc:
            sys.stderr.write(f"{PROGRAM}: cannot run {command[0]}: {exc.strerror}\n")
            return 127 if isinstance(exc, FileNotFoundError) else 126
        try:
            relay.attach(child.pid)
            with _terminal_for(child.pid):
                status = child.wait()
        finally:
            _end_group(child)
    return status if status >= 0 else 128 - status


class _Relay:
    """Interrupts and terminations sent here go to the command's group, which then ends
    as it sees fit; this process waits for it either way. One that comes before the
    command has started is passed on as soon as it has."""

    def __init__(self) -> None:
        self.group: int | None = None
        self.pending: list[int] = []

    def attach(self, group: int) -> None:
        self.group = group
        for signum in self.pending:
            self._send(signum)

    def _send(self, signum: int) -> None:
        assert self.group is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.group, signum)

    def _received(self, signum: int, _frame: FrameType | None) -> None:
        if self.group is None:
            self.pending.append(signum)
        else:
            self._send(signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self._received) for sig in _PASSED_ON}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


@contextlib.contextmanager
def _terminal_for(group: int) -> Iterator[None]:
    """Makes `group` the terminal's foreground group while it runs, when this process's
    group has the terminal (it may be in the background, or have none)."""
    try:
        owns = os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        owns = False
    if not owns:
        yield
        return
    # Changing the foreground group from what becomes a background group raises SIGTTOU.
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(0, group)
        # It may have read the terminal before it was its own, and been stopped for it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGCONT)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(0, os.getpgrp())
        signal.signal(signal.SIGTTOU, previous)


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """Ends what is left of the command's group: the command itself if this process is
    leaving early, and anything it left running in the background. SIGKILL follows for
    what outlives the grace period: a process may hold SIGTERM blocked (a shell's child
    forked while a trap was being handled keeps the shell's signal mask)."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except OSError:
        return  # nobody left in it: the usual case
    deadline = time.monotonic() + _STOP_GRACE_S
    while time.monotonic() < deadline:
        if child.poll() is not None and not _group_alive(child.pid):
            return
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _group_alive(group: int) -> bool:
    """Whether any process is still in the group (one ended but not yet reaped counts)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
