"""Running git in a folder wisp has not been told to trust.

A repository's own configuration (`.git/config`, and what it includes) can name commands
that plain read-only git runs on its own: `core.fsmonitor` when the index is refreshed,
a `filter.<driver>.clean`/`process` for files whose attributes name the driver, a
`diff.<driver>.textconv` or `.command` when a diff is shown. A cloned repository is
therefore code, and `git diff` in it runs that code. Every git that wisp starts by itself
(a host's `get_workspace_diff`, the UI's `/diff`) goes through `guarded_argv`, which
switches each such setting off for that one run.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

# Settings under which git runs a command of the repository's choosing during diff,
# status or ls-files. Names as `git config --list --name-only` prints them (section and
# key lower-cased, the subsection as written).
_COMMAND_SETTING = re.compile(
    r"^(?:core\.fsmonitor|filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:textconv|command))$")
# Also on the command line, for the commands that take them.
DIFF_FLAGS = ("--no-ext-diff", "--no-textconv")


async def guarded_argv(git: str, cwd: Path, *args: str) -> list[str]:
    """`git <args>` with every command-running setting of the repository at `cwd`
    overridden (`-c name=`), and the file-system monitor off."""
    overrides = ["-c", "core.fsmonitor=false"]
    for name in await _setting_names(git, cwd):
        if _COMMAND_SETTING.match(name) and name != "core.fsmonitor":
            overrides += ["-c", f"{name}="]
    return [git, *overrides, *args]


async def _setting_names(git: str, cwd: Path) -> list[str]:
    """The names of every setting in force at `cwd` (reading configuration runs
    nothing)."""
    proc = await asyncio.create_subprocess_exec(
        git, "config", "--list", "--name-only", cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True)
    out, _ = await proc.communicate()
    return out.decode("utf-8", "replace").splitlines()
