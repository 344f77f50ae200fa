"""Cgroups per session: a process limit where the kernel's rlimit does not hold (uid 0),
and, for a served session, memory and CPU limits too.

Above: the probe (is there a pids controller we may write?), the session's sandbox
(which makes one cgroup and starts each command inside it) and `wisp serve`'s
containment (which asks for `controller_roots("pids", "memory", "cpu")`). Below: cgroup
v1's per-controller hierarchies or cgroup v2's unified one, found through
/proc/self/mountinfo and /proc/self/cgroup.

A command enters its cgroups before bubblewrap starts (`enter_argv`): a tiny `sh` writes
its own pid into each `cgroup.procs` and execs bubblewrap, so nothing the command starts
is ever outside them, and the limits count every process of the session's commands.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal

_COUNTER = itertools.count(1)
# The file that shows a controller is usable in a new child: (cgroup v1, cgroup v2).
_LIMIT_FILES = {"pids": ("pids.max", "pids.max"),
                "memory": ("memory.limit_in_bytes", "memory.max"),
                "cpu": ("cpu.cfs_quota_us", "cpu.max")}
CPU_PERIOD_US = 100_000


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fstype, super options) of every cgroup mount."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as lines:
            for line in lines:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) > 4 and len(tail) > 2 and tail[0] in ("cgroup", "cgroup2"):
                    found.append((fields[4], tail[0], tail[2]))
    except OSError:
        pass
    return found


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) → this process's cgroup path."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as lines:
            for line in lines:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def _candidates(controller: str) -> list[tuple[str, bool]]:
    """(folder, is v2) of this process's own cgroup for `controller`, per mount."""
    own = _own_paths()
    roots = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and controller in options.split(",") and controller in own:
            roots.append((os.path.join(mount, own[controller].lstrip("/")), False))
        elif fstype == "cgroup2" and "" in own:
            roots.append((os.path.join(mount, own[""].lstrip("/")), True))
    return roots


def _try_root(root: str, controller: str, v2: bool) -> str:
    """'' when a child with `controller`'s limit file can be made under `root`, else why
    not."""
    if v2:
        with contextlib.suppress(OSError), open(os.path.join(root, "cgroup.subtree_control"),
                                                "w", encoding="ascii") as control:
            control.write(f"+{controller}")
    trial = os.path.join(root, f"wisp-probe-{os.getpid()}-{next(_COUNTER)}")
    try:
        os.mkdir(trial)
    except OSError as exc:
        return f"cannot make a cgroup in {root}: {exc.strerror}"
    try:
        ok = os.path.exists(os.path.join(trial, _LIMIT_FILES[controller][v2]))
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(trial)
    return "" if ok else f"the {controller} controller is not enabled in {root}"


def controller_roots(*controllers: str) -> tuple[dict[str, str], list[str]]:
    """({controller: folder its new cgroups go in}, why each missing one is missing)."""
    roots: dict[str, str] = {}
    missing: list[str] = []
    for controller in controllers:
        errors = []
        for root, v2 in _candidates(controller):
            why = _try_root(root, controller, v2)
            if not why:
                roots[controller] = root
                break
            errors.append(why)
        else:
            missing.append("; ".join(errors) or f"no cgroup {controller} controller is mounted")
    return roots, missing


def usable_pids_root() -> tuple[str | None, str]:
    roots, missing = controller_roots("pids")
    return roots.get("pids"), "; ".join(missing)


def _limit_writes(controller: str, value: float, v2: bool) -> list[tuple[str, str]]:
    """(file, text) that set `controller`'s limit to `value` (processes, bytes, CPUs)."""
    if controller == "cpu":
        quota = max(1000, int(value * CPU_PERIOD_US))
        if v2:
            return [("cpu.max", f"{quota} {CPU_PERIOD_US}")]
        return [("cpu.cfs_period_us", str(CPU_PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
    return [(_LIMIT_FILES[controller][v2], str(int(value)))]


class SessionCgroup:
    """One session's cgroups (a folder per v1 hierarchy, or one under v2) and their
    limits: `limits` maps a controller to processes, bytes or CPUs."""

    __slots__ = ("paths",)

    def __init__(self, roots: dict[str, str], limits: dict[str, float]) -> None:
        name = f"wisp-{os.getpid()}-{next(_COUNTER)}"
        self.paths: list[str] = []
        try:
            for controller, value in limits.items():
                if controller in roots:
                    self._limit(os.path.join(roots[controller], name), controller, value)
        except OSError:
            self.close()
            raise

    def _limit(self, path: str, controller: str, value: float) -> None:
        if path not in self.paths:
            os.mkdir(path)
            self.paths.append(path)
        v2 = os.path.exists(os.path.join(path, "cgroup.controllers"))
        for file, text in _limit_writes(controller, value, v2):
            with open(os.path.join(path, file), "w", encoding="ascii") as out:
                out.write(text)

    def enter_argv(self, argv: list[str]) -> list[str]:
        """`argv` started from inside the cgroups (see the module doc)."""
        import shlex

        writes = " && ".join(f"echo $$ > {shlex.quote(os.path.join(p, 'cgroup.procs'))}"
                             for p in self.paths)
        return ["/bin/sh", "-c", f'{writes} && exec "$@"', "sh", *argv]

    def close(self) -> None:
        """Kills what is left inside, then removes the cgroups. Idempotent."""
        for path in self.paths:
            _empty_and_remove(path)


def _empty_and_remove(path: str) -> None:
    procs = os.path.join(path, "cgroup.procs")
    for _ in range(50):
        try:
            with open(procs, encoding="ascii") as listing:
                pids = [int(p) for p in listing.read().split()]
        except OSError:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            import time

            time.sleep(0.01)  # the killed processes are still being reaped
