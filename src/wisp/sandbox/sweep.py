"""What a wisp process that died without cleaning up left of its sandbox: placeholders in
the user's folders, private temp folders, pids cgroups. Swept by the next sandboxed
session on the machine (once per process), only for processes that no longer exist.

Above: `build_sandbox`. Below: wisp's temp folder (`<tmp>/wisp-<uid>`, where each
process keeps a placeholder ledger and its sessions' temp folders, named by its pid) and
the cgroup folder the probe found.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil

from wisp.sandbox import placeholders

_OWNED = re.compile(r"^(?:placeholders|sandbox|wisp)-(\d+)(?:[-.].*)?$")
_SWEPT: list[bool] = []


def _dead(pid: int) -> bool:
    return pid != os.getpid() and not os.path.exists(f"/proc/{pid}")


def _left_by_the_dead(folder: str) -> list[str]:
    """The names in `folder` that belong to a wisp process that no longer runs."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [name for name in names
            if (owner := _OWNED.match(name)) is not None and _dead(int(owner.group(1)))]


def _remove(path: str, name: str, is_cgroup: bool) -> None:
    if is_cgroup:
        if name.startswith("wisp-"):
            with contextlib.suppress(OSError):
                os.rmdir(path)  # only an empty one: nothing of it still runs
    elif name.startswith("placeholders-"):
        placeholders.remove_listed(path)
    elif name.startswith("sandbox-"):
        shutil.rmtree(path, ignore_errors=True)


def sweep(wisp_temp: str, cgroup_root: str | None) -> None:
    """Once per process: clean up after dead processes, then start this one's ledger."""
    if _SWEPT:
        return
    _SWEPT.append(True)
    for folder, is_cgroup in ((wisp_temp, False), (cgroup_root, True)):
        if folder is not None:
            for name in _left_by_the_dead(folder):
                _remove(os.path.join(folder, name), name, is_cgroup)
    placeholders.LEDGER[:] = [os.path.join(wisp_temp, f"placeholders-{os.getpid()}")]
