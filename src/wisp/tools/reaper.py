"""No orphans: processes a tool left running in the background die when wisp exits.

A Bash command like `npm run dev > log 2>&1 &` detaches a child that outlives the command's
shell. Once a tool has spawned anything, wisp makes itself a child subreaper (Linux
`PR_SET_CHILD_SUBREAPER`), so such orphans are re-parented to wisp instead of init. At exit,
every remaining child of wisp (and its process group) is killed. Only processes that are
provably ours are touched: nothing is killed by a pid or pgid that might have been reused.
"""

from __future__ import annotations

import contextlib
import os
import sys

PR_SET_CHILD_SUBREAPER = 36
_enabled = False


def become_subreaper() -> None:
    """Idempotent; a no-op where unsupported (not Linux)."""
    global _enabled
    if _enabled or not sys.platform.startswith("linux"):
        return
    _enabled = True
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # without it, detached jobs fall back to init, as in any other program


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # field 4 of /proc/<pid>/stat: the parent pid
            found.append(int(entry))
    return found


def kill_descendants(rounds: int = 5) -> int:
    """Kills wisp's remaining children and their process groups. Killing a child can orphan
    its own children onto us, so this repeats a few rounds. Returns how many it killed."""
    if not _enabled:
        return 0
    import signal  # here: print mode loads this module before its first frame

    me, killed = os.getpid(), 0
    for _ in range(rounds):
        children = _children(me)
        if not children:
            break
        for pid in children:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed += 1
        for pid in children:  # reap, so the next round sees only live processes
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
    return killed


def end_all_processes() -> None:
    """At exit: every tracked tool group of every session and every service (MCP server),
    then every leftover child (see module doc)."""
    from wisp.processes import live_registries

    for registry in live_registries():
        registry.kill_all()
    kill_descendants()
    # Some ways out skip atexit (duplex leaves with os._exit): the sandbox's placeholders
    # in the user's folders, its temp folders and cgroups must go all the same.
    runner = sys.modules.get("wisp.sandbox.runner")
    if runner is not None:
        runner.close_all()
