"""Where a path stands: inside the working folders, protected agent configuration, or a
harmless device.

The working folders are the boundary of what wisp may touch without asking: the cwd,
`--add-dir` folders and settings' `additionalDirectories`. Protected paths are the files
that configure an agent or run code on the user's behalf later (settings, hooks, git hooks,
shell start-up files): a model that could write them could grant itself anything in the
next session, so writing them always needs explicit approval.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# Reading or writing these changes nothing and reveals nothing.
_HARMLESS_DEVICES = frozenset({
    "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout",
    "/dev/stderr", "/dev/tty", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2",
})

# Any folder of these names, wherever it is: agent configuration and VCS internals.
# `.git` holds hooks and config that run commands; `.husky` holds hooks git runs.
_PROTECTED_FOLDERS = frozenset({".claude", ".wisp", ".git", ".husky"})

# Files of these names, wherever they are.
_PROTECTED_FILES = frozenset({
    ".mcp.json", ".claude.json", ".gitconfig", ".gitmodules", ".envrc",
    # Shell start-up files run at every shell start.
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
    ".inputrc",
})


def is_harmless_device(path: str) -> bool:
    return path in _HARMLESS_DEVICES or path.startswith(("/dev/fd/", "/proc/self/fd/"))


def is_inside(path: str, folders: Iterable[str]) -> bool:
    """`path` (normalised) is one of `folders` (normalised) or below one."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def config_folders(env: Mapping[str, str]) -> list[str]:
    """wisp's and the reference CLI's user config folders, normalised."""
    home = env.get("HOME") or os.path.expanduser("~")
    folders = [os.path.join(home, ".wisp"), os.path.join(home, ".claude"),
               os.path.join(home, ".config", "wisp"), os.path.join(home, ".config", "fish")]
    folders += [env[name] for name in ("WISP_CONFIG_DIR", "CLAUDE_CONFIG_DIR") if env.get(name)]
    return [os.path.realpath(os.path.expanduser(f)) for f in folders]


def protected_reason(path: str, config: Iterable[str]) -> str | None:
    """Why writing `path` (normalised) needs explicit approval, or None."""
    parts = path.split("/")
    for part in parts[:-1]:
        if part in _PROTECTED_FOLDERS:
            return f"{path} is inside a {part} folder (agent or repository configuration)"
    name = parts[-1]
    if name in _PROTECTED_FOLDERS:
        return f"{path} is a {name} folder (agent or repository configuration)"
    if name in _PROTECTED_FILES:
        return f"{path} is a protected configuration file"
    if is_inside(path, config):
        return f"{path} is inside wisp's or Claude Code's configuration folder"
    return None
