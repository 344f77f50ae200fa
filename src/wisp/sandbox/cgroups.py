"""A pids cgroup per session, where the kernel's process rlimit does not hold (uid 0).

Above: the probe (is there a pids controller we may write?) and the session's sandbox
(which makes one cgroup and starts each command inside it). Below: cgroup v1's `pids`
hierarchy or cgroup v2's unified one, found through /proc/self/mountinfo and
/proc/self/cgroup.

A command enters its cgroup before bubblewrap starts (`enter_argv`): a tiny `sh` writes
its own pid into `cgroup.procs` and execs bubblewrap, so nothing the command starts is
ever outside it, and the count includes every process of the session's commands.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal

_COUNTER = itertools.count(1)


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


def _candidates() -> list[str]:
    own = _own_paths()
    roots = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options.split(",") and "pids" in own:
            roots.append(os.path.join(mount, own["pids"].lstrip("/")))
        elif fstype == "cgroup2" and "" in own:
            roots.append(os.path.join(mount, own[""].lstrip("/")))
    return roots


def _try_root(root: str) -> str:
    """'' when a child with pids.max can be made under `root`, else why not."""
    if os.path.exists(os.path.join(root, "cgroup.subtree_control")):
        with contextlib.suppress(OSError), open(os.path.join(root, "cgroup.subtree_control"),
                                                "w", encoding="ascii") as control:
            control.write("+pids")
    trial = os.path.join(root, f"wisp-probe-{os.getpid()}")
    try:
        os.mkdir(trial)
    except OSError as exc:
        return f"cannot make a cgroup in {root}: {exc.strerror}"
    try:
        ok = os.path.exists(os.path.join(trial, "pids.max"))
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(trial)
    return "" if ok else f"the pids controller is not enabled in {root}"


def usable_pids_root() -> tuple[str | None, str]:
    errors = []
    for root in _candidates():
        why = _try_root(root)
        if not why:
            return root, ""
        errors.append(why)
    return None, "; ".join(errors) or "no cgroup pids controller is mounted"


class PidsCgroup:
    """One session's cgroup: at most `limit` processes among all its commands."""

    __slots__ = ("path",)

    def __init__(self, root: str, limit: int) -> None:
        self.path = os.path.join(root, f"wisp-{os.getpid()}-{next(_COUNTER)}")
        os.mkdir(self.path)
        with open(os.path.join(self.path, "pids.max"), "w", encoding="ascii") as out:
            out.write(str(limit))

    def enter_argv(self, argv: list[str]) -> list[str]:
        """`argv` started from inside the cgroup (see the module doc)."""
        procs = os.path.join(self.path, "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *argv]

    def close(self) -> None:
        """Kills what is left inside, then removes the cgroup. Idempotent."""
        procs = os.path.join(self.path, "cgroup.procs")
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
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                import time

                time.sleep(0.01)  # the killed processes are still being reaped
