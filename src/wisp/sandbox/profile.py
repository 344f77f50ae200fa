"""A sandbox profile: what one session's commands may touch, and the bubblewrap argv that
holds them to it.

Above: the session's `CommandSandbox` (and, later, a served session, which builds its own
profile for its workspace). Below: `view.Planner` for the masks and the probe's findings
about this bubblewrap.

The argv, in mount order: the host root read-only, a fresh /dev and /proc, masks that
contain a writable folder, the writable folders (working folders, the private temp
folder), then the masks inside them. Namespaces: user (all capabilities dropped, no
further user namespaces where bubblewrap can forbid them), pid (nothing outlives the
command), network (no route out; `wisp.sandbox.network` adds the proxy bridge when
present), IPC. `--new-session` detaches the terminal (TIOCSTI), `--die-with-parent` ties
the sandbox to wisp. Limits are set by the inner shell before the command runs: they are
hard limits and the command has no capability to raise them.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence

from wisp.sandbox.view import MountPlan, Planner

_NAMESPACES = ("--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
               "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL")


# Plain slotted classes rather than dataclasses: defining a dataclass costs ~1.5 ms at
# import, paid by every session that turns the sandbox on. Immutable by convention.


class Limits:
    """Per command: processes (RLIMIT_NPROC, or the session's pids cgroup as root), the
    size of any one file written (RLIMIT_FSIZE) and, for served sessions, CPU seconds per
    process (RLIMIT_CPU) and, where no memory cgroup holds the session, address space
    per process (RLIMIT_AS)."""

    __slots__ = ("_prelude", "cpu_seconds", "max_file_mb", "max_processes", "memory_mb")

    def __init__(self, max_processes: int = 1024, max_file_mb: int = 2048, *,
                 cpu_seconds: int | None = None, memory_mb: int | None = None) -> None:
        self.max_processes = max_processes
        self.max_file_mb = max_file_mb
        self.cpu_seconds = cpu_seconds
        self.memory_mb = memory_mb
        self._prelude = ""

    def prelude(self) -> str:
        """The shell line that sets them, capped at what this process may grant."""
        if not self._prelude:
            nproc = _capped(resource.RLIMIT_NPROC, self.max_processes)
            fsize = _capped(resource.RLIMIT_FSIZE, self.max_file_mb * 1024 * 1024) // 1024
            line = f"ulimit -c 0 -u {nproc} -f {fsize}"
            if self.cpu_seconds is not None:
                line += f" -t {_capped(resource.RLIMIT_CPU, self.cpu_seconds)}"
            if self.memory_mb is not None:
                memory = _capped(resource.RLIMIT_AS, self.memory_mb * 1024 * 1024) // 1024
                line += f" -v {memory}"
            self._prelude = line + "; "
        return self._prelude

    def __repr__(self) -> str:
        return (f"Limits({self.max_processes}, {self.max_file_mb}, "
                f"cpu_seconds={self.cpu_seconds}, memory_mb={self.memory_mb})")


def _capped(which: int, wanted: int) -> int:
    hard = resource.getrlimit(which)[1]
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


class SandboxProfile:
    """What a session's commands may write (`writable`, plus `temp_dir`), what they may
    not see (`hide`, `deny_read`) or change (`readonly`, `deny_write`), what is granted
    back (`allow_read`), and their limits. Paths are absolute; rule patterns may glob.
    A served session builds its own, for its workspace."""

    __slots__ = ("allow_read", "deny_read", "deny_write", "hide", "home", "limits",
                 "readonly", "temp_dir", "writable")

    def __init__(self, writable: Sequence[str], temp_dir: str, home: str, *,
                 hide: Sequence[str] = (), readonly: Sequence[str] = (),
                 deny_read: Sequence[str] = (), deny_write: Sequence[str] = (),
                 allow_read: Sequence[str] = (), limits: Limits | None = None) -> None:
        self.writable = tuple(writable)
        self.temp_dir = temp_dir
        self.home = home
        self.hide = tuple(hide)
        self.readonly = tuple(readonly)
        self.deny_read = tuple(deny_read)
        self.deny_write = tuple(deny_write)
        self.allow_read = tuple(allow_read)
        self.limits = limits if limits is not None else Limits()

    def __repr__(self) -> str:
        return (f"SandboxProfile(writable={self.writable!r}, temp_dir={self.temp_dir!r}, "
                f"hide={self.hide!r}, limits={self.limits!r})")

    def planner(self) -> Planner:
        return Planner((*self.writable, self.temp_dir), hide=self.hide, readonly=self.readonly,
                       deny_read=self.deny_read, deny_write=self.deny_write,
                       allow_read=self.allow_read, home=self.home, projects=self.writable)


def bwrap_argv(bwrap: str, profile: SandboxProfile, plan: MountPlan, inner: Sequence[str], *,
               disable_userns: bool, weak_proc: bool, extra: Sequence[str] = ()) -> list[str]:
    """The full argv for one command: `inner` (the shell and its command line) inside."""
    argv = [bwrap, *_NAMESPACES]
    if disable_userns:
        argv.append("--disable-userns")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev"]
    argv += ["--ro-bind", "/proc", "/proc"] if weak_proc else ["--proc", "/proc"]
    argv += plan.before
    for folder in dict.fromkeys((*profile.writable, profile.temp_dir)):
        real = os.path.realpath(folder)
        if os.path.isdir(real):
            argv += ["--bind", real, real]
    for folder in sorted(plan.pinned, key=lambda f: f.count("/")):
        argv += ["--bind", folder, folder]
    argv += plan.after
    for folder in plan.remount:  # a hidden /tmp stays read-only around the folders in it
        argv += ["--remount-ro", folder]
    argv += extra
    return [*argv, "--", *inner]
