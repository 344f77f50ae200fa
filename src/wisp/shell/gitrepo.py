"""Whether a repository's own configuration makes read-only git run a program.

`git status`, `git diff` and `git log` only read, unless the repository says otherwise:
`.git/config` can name a file-system monitor (`core.fsmonitor`, run on every index
refresh), filter drivers (`filter.<x>.clean`/`smudge`/`process`), diff drivers and an
external diff (`diff.<x>.textconv`/`command`, `diff.external`), a signature program
(`gpg.program`, run by `log --show-signature` or `log.showSignature`) or a pager. A cloned
repository is therefore code, and a git command in it is read-only only when its
configuration names none of these. Anything this reader cannot follow (an `include`, a
`.git` file it cannot read) counts as code: the judge allows only what it understands.

Read from the files (no git process), cached by each file's size and change time.
"""

from __future__ import annotations

import os
import re

_FALSE = frozenset({"", "false", "no", "off", "0"})
# (section, key) pairs that name a program; `*` stands for any subsection.
_PROGRAM_KEYS = frozenset({
    ("core", "fsmonitor"), ("core", "pager"), ("diff", "external"), ("gpg", "program"),
    ("filter*", "clean"), ("filter*", "smudge"), ("filter*", "process"),
    ("diff*", "textconv"), ("diff*", "command"), ("gpg*", "program"), ("pager", "*"),
})
_HEADER = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$')
_ENTRY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")

_cache: dict[str, tuple[int, int, bool]] = {}


def runs_code(folder: str) -> bool:
    """Whether git run in `folder` may run a program the repository's configuration
    names. False outside a repository."""
    configs = _config_files(folder)
    if configs is None:
        return True
    return any(_file_runs_code(path) for path in configs)


def _config_files(folder: str) -> list[str] | None:
    """The repository's configuration files, [] outside a repository, None when where
    they are cannot be worked out."""
    here = os.path.abspath(folder)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return _with_common(dot_git)
        if os.path.lexists(dot_git):
            gitdir = _pointed_to(dot_git)
            return None if gitdir is None else _with_common(gitdir)
        parent = os.path.dirname(here)
        if parent == here:
            return []
        here = parent


def _pointed_to(dot_git: str) -> str | None:
    """The folder a `.git` file (a worktree's, a submodule's) names."""
    try:
        with open(dot_git, encoding="utf-8") as pointer:
            line = pointer.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.join(os.path.dirname(dot_git), line.removeprefix("gitdir:").strip())


def _with_common(gitdir: str) -> list[str]:
    files = [os.path.join(gitdir, "config"), os.path.join(gitdir, "config.worktree")]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as common:
            files.append(os.path.join(gitdir, common.readline().strip(), "config"))
    except (OSError, UnicodeDecodeError):
        pass
    return files


def _file_runs_code(path: str) -> bool:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    cached = _cache.get(path)
    if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
        return cached[2]
    try:
        with open(path, encoding="utf-8") as config:
            found = text_runs_code(config.read())
    except (OSError, UnicodeDecodeError):
        found = True
    _cache[path] = (stat.st_mtime_ns, stat.st_size, found)
    return found


def text_runs_code(text: str) -> bool:
    """Whether a git configuration file's text names a program read-only git may run
    (or holds something this reader does not follow)."""
    section: tuple[str, bool] = ("", False)  # (name, has a subsection)
    continued = False
    for raw in text.splitlines():
        line = raw.strip()
        was_continued, continued = continued, _continues(line)
        if was_continued or not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = _HEADER.match(line)
            if header is None:
                return True
            section = _section(header.group(1), header.group(2))
            line = header.group(3).strip()
            if not line or line[0] in "#;":
                continue
        entry = _ENTRY.match(line)
        if entry is None or section[0] in ("include", "includeif"):
            return True  # another file's settings: not followed here
        if _names_a_program(section, entry.group(1).lower(), entry.group(2)):
            return True
    return False


def _section(name: str, subsection: str | None) -> tuple[str, bool]:
    """`[diff "x"]` and the older `[diff.x]` both have a subsection."""
    lowered = name.lower()
    if subsection is not None:
        return lowered, True
    first, dot, _ = lowered.partition(".")
    return first, bool(dot)


def _names_a_program(section: tuple[str, bool], key: str, value: str | None) -> bool:
    name = section[0] + ("*" if section[1] else "")
    if (name, key) not in _PROGRAM_KEYS and (name, "*") not in _PROGRAM_KEYS:
        return False
    if value is None:  # a bare key is `true`
        return key != "fsmonitor"
    return _unquoted(value).lower() not in _FALSE


def _unquoted(value: str) -> str:
    value = re.split(r"\s+[#;]", value, maxsplit=1)[0].strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1
