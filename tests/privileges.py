"""Checks that need an unprivileged user, run as one even when the suite runs as root (as
CI does). Root reads a file whatever its mode, so "an unreadable file is skipped" can only
be seen by a user the mode binds: as root, the check runs in a forked child that has
dropped to `nobody`; otherwise it runs in this process.
"""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
IS_ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody")


def _drop_privileges() -> None:
    os.setgroups([])
    os.setgid(NOBODY.pw_gid)
    os.setuid(NOBODY.pw_uid)


def unprivileged(check: Callable[[], T]) -> T:
    """`check()`'s value (or exception), computed by a user that file modes bind."""
    if not IS_ROOT:
        return check()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        try:
            _drop_privileges()
            outcome: tuple[bool, object] = (True, check())
        except BaseException as exc:  # carried to the parent, which raises it there
            outcome = (False, exc)
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(outcome, out)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as src:
        data = src.read()
    os.waitpid(pid, 0)
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def setpriv_argv() -> list[str]:
    """A command prefix that runs a program as `nobody` (empty when not root)."""
    if not IS_ROOT:
        return []
    return ["setpriv", f"--reuid={NOBODY.pw_uid}", f"--regid={NOBODY.pw_gid}",
            "--clear-groups", "--"]


@contextmanager
def open_folder() -> Iterator[Path]:
    """A scratch folder `nobody` can enter (pytest's tmp_path, under root's private
    /tmp/pytest-of-root, is out of its reach)."""
    folder = Path(tempfile.mkdtemp(prefix="wisp-unprivileged-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
