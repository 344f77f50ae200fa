"""Placeholders for protected paths that do not exist yet.

A mount needs something to mount on. To make creating `.mcp.json` or `.git/hooks` fail
inside the sandbox, the first missing component of the path is created on the host as an
empty file, and /dev/null is mounted over it in the sandbox: there it is a character
device, and `mkdir -p .git/hooks` or `echo > .mcp.json` fail. When the last command that
needs a placeholder ends, it is removed again, but only if it is still the empty file this
process made (same inode): nothing is left behind on the host.

Commands of one process share placeholders (counted); another wisp process working in
the same folder at the same moment may see one briefly (docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import os
import threading
from stat import S_IMODE, S_ISREG

_LOCK = threading.Lock()
_HELD: dict[str, tuple[int, int, int]] = {}  # path → (refcount, st_dev, st_ino)
# Where this process notes each placeholder it makes, so that if it dies without cleaning
# up (SIGKILL, a closed terminal), the next sandboxed session removes them (`sweep`).
LEDGER: list[str] = []  # [path of the ledger file], set by the session that sweeps


# A placeholder is created with no permissions at all: that mode, on an empty file, is
# how a placeholder whose inode never reached the ledger is still recognised.
_MODE = 0o000
_PENDING = "- -"  # ledger line for a placeholder about to be made (inode not known yet)


def _note(path: str, identity: str) -> None:
    """Appends one line to the ledger. The line for a path is written *before* the
    placeholder is created and again with its inode after, so a SIGKILL between the two
    still leaves the path listed (a killed process never leaves an unlisted file)."""
    if not LEDGER:
        return
    try:
        with open(LEDGER[0], "a", encoding="utf-8") as ledger:
            ledger.write(f"{identity} {path}\n")
    except OSError:
        pass


def acquire(path: str) -> bool:
    """Takes (or shares) the placeholder at `path`; False if something else is there."""
    with _LOCK:
        held = _HELD.get(path)
        if held is not None:
            _HELD[path] = (held[0] + 1, held[1], held[2])
            return True
        _note(path, _PENDING)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, _MODE)
        except OSError:
            return False
        try:
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        _HELD[path] = (1, stat.st_dev, stat.st_ino)
        _note(path, f"{stat.st_dev} {stat.st_ino}")
        return True


def release(path: str) -> None:
    with _LOCK:
        held = _HELD.get(path)
        if held is None:
            return
        if held[0] > 1:
            _HELD[path] = (held[0] - 1, held[1], held[2])
            return
        del _HELD[path]
        with contextlib.suppress(OSError):
            stat = os.lstat(path)
            if (stat.st_dev, stat.st_ino) == held[1:] and stat.st_size == 0:
                os.unlink(path)


def release_all() -> None:
    """At exit: whatever is still held (a command cut short) goes, and the ledger."""
    for path in list(_HELD):
        while path in _HELD:
            release(path)
    if LEDGER:
        with contextlib.suppress(OSError):
            os.unlink(LEDGER[0])


def remove_listed(ledger: str) -> None:
    """Removes the placeholders a dead process noted in `ledger` (each only if it is
    still the empty file that process made), then the ledger."""
    try:
        with open(ledger, encoding="utf-8") as lines:
            entries = [line.rstrip("\n").split(" ", 2) for line in lines]
    except OSError:
        return
    identities: dict[str, tuple[int, int] | None] = {}
    for dev, ino, path in (e for e in entries if len(e) == 3):
        with contextlib.suppress(ValueError):
            identities[path] = None if (dev, ino) == ("-", "-") else (int(dev), int(ino))
    for path, identity in identities.items():
        with contextlib.suppress(OSError):
            if _made_by_the_dead(os.lstat(path), identity):
                os.unlink(path)
    with contextlib.suppress(OSError):
        os.unlink(ledger)


def _made_by_the_dead(stat: os.stat_result, identity: tuple[int, int] | None) -> bool:
    """An empty file that is the noted inode; or, where the process died between
    creating it and noting its inode, an empty regular file with a placeholder's mode
    (no permissions: nothing else makes such a file at a protected path)."""
    if stat.st_size != 0:
        return False
    if identity is not None:
        return (stat.st_dev, stat.st_ino) == identity
    return S_ISREG(stat.st_mode) and S_IMODE(stat.st_mode) == _MODE


def is_held(path: str) -> bool:
    """Whether `path` is a placeholder of this process (a command running now holds it)."""
    return path in _HELD


def held() -> list[str]:
    return sorted(_HELD)
