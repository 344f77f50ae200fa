"""Memory files: the `CLAUDE.md` instructions Claude Code users keep for themselves and
their projects, loaded so a project that works with the reference keeps its instructions.

Where they are looked for, by settings source:

- user: `<config dir>/CLAUDE.md`;
- project: `CLAUDE.md` and `.claude/CLAUDE.md` in the working folder and each parent up
  to the repository root (the nearest folder holding `.git`); outside a repository, the
  working folder alone, so stray files in /tmp or the home folder never reach unrelated
  sessions;
- local: `CLAUDE.local.md` in the same folders, right after each folder's project files.

User files come first, then the folders from the outermost to the working folder: the more
specific a file, the later it reads, so it reads as having the last word. A file may pull
in others with `@path` (relative to its own folder, `~/…` or absolute); each import
follows its importer, up to five hops deep, and no file is loaded twice.

A project or local file may not bring in a file outside the project (the repository
root, or the working folder outside a repository), by an import or by being a symlink:
a cloned repository's `@~/.ssh/id_rsa` would otherwise copy the key into the model's
context. Such files are left out and listed (`MemoryLoad.outside`) unless the user
approved imports from outside for this project (a recorded answer, see
`wisp.settings.trust`). User files import what they like.

This runs on every start, before the first frame: a session without memory files costs a
few `stat` calls (about one per folder up to the repository root, and one per file
name), and no pattern is compiled until a file is read.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Collection
from pathlib import Path

from wisp.diagnostics import warn
from wisp.jsontypes import JSON

MAX_BYTES = 256 * 1024
MAX_IMPORT_DEPTH = 5
PROJECT_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md")
LOCAL_NAME = "CLAUDE.local.md"
USER_NAME = "CLAUDE.md"

# What each kind of file is, as the model is told and `/memory` shows.
KIND_LABELS = {
    "user": "the user's private instructions for all projects",
    "project": "project instructions, checked in",
    "local": "private project instructions, not checked in",
}

# Patterns are strings: `re` compiles them on first use and caches them, so a session
# without memory files never pays for them.
_INLINE_CODE = r"(`+)(?:(?!\1).)+?\1"
_IMPORT_TOKEN = r"(?:^|(?<=\s))@(\S+)"
_TRAILING_PUNCTUATION = ".,;:!?)]}\"'"


class MemoryFile:
    """One loaded memory file. `imported_from` is the file whose `@path` pulled it in;
    an imported file has the kind of its importer."""

    __slots__ = ("content", "imported_from", "kind", "path")

    def __init__(self, path: Path, kind: str, content: str,
                 imported_from: Path | None = None) -> None:
        self.path = path
        self.kind = kind
        self.content = content
        self.imported_from = imported_from

    def __repr__(self) -> str:
        return (f"MemoryFile(path={self.path!r}, kind={self.kind!r}, "
                f"chars={len(self.content)}, imported_from={self.imported_from!r})")

    def describe(self) -> JSON:
        """The file's place and size, for frames and the terminal UI (never its text)."""
        row: JSON = {"path": str(self.path), "type": self.kind, "chars": len(self.content)}
        if self.imported_from is not None:
            row["imported_from"] = str(self.imported_from)
        return row


def load_memory(cwd: Path, config_dir: Path, sources: Collection[str],
                home: Path | None = None, *, allow_outside: bool = False
                ) -> list[MemoryFile]:
    """Every memory file of the selected settings sources, in the order the model reads
    them. `home` expands `@~/…` imports (the session's HOME, which may differ from the
    process's); None means the process's home folder. `allow_outside`: the user approved
    project files bringing in files from outside the project."""
    return read_memory(cwd, config_dir, sources, home, allow_outside=allow_outside).files


class MemoryLoad:
    """The files loaded, and the files outside the project that were left out."""

    __slots__ = ("files", "outside")

    def __init__(self, files: list[MemoryFile], outside: list[Path]) -> None:
        self.files = files
        self.outside = outside


def read_memory(cwd: Path, config_dir: Path, sources: Collection[str],
                home: Path | None = None, *, allow_outside: bool = False) -> MemoryLoad:
    """`load_memory`, also answering what was left out for being outside the project."""
    folders = search_folders(Path(os.path.abspath(cwd)))
    loader = _Loader(home, None if allow_outside else folders[0])
    for kind, path in memory_locations(cwd, config_dir, sources):
        loader.add(path, kind)
    return MemoryLoad(loader.files, loader.outside)


def memory_locations(cwd: Path, config_dir: Path, sources: Collection[str]
                     ) -> list[tuple[str, Path]]:
    """(kind, path) of every file `load_memory` looks for before imports, in its order;
    also what `/memory` names when none of them exists."""
    found = [("user", config_dir / USER_NAME)] if "user" in sources else []
    if "project" in sources or "local" in sources:
        for folder in search_folders(Path(os.path.abspath(cwd))):
            if "project" in sources:
                found += [("project", folder / name) for name in PROJECT_NAMES]
            if "local" in sources:
                found.append(("local", folder / LOCAL_NAME))
    return found


def search_folders(cwd: Path) -> list[Path]:
    """The folders searched for project and local files, outermost first: `cwd` up to the
    repository root, or `cwd` alone when it is in no repository."""
    chain: list[Path] = []
    for folder in (cwd, *cwd.parents):
        chain.append(folder)
        if os.path.lexists(folder / ".git"):
            return chain[::-1]
    return [cwd]


class _Loader:
    """Collects files depth-first, each import right after the file that first imports
    it. Each file is loaded once, known by device and inode (so links and `..` paths to
    it count once), which also ends cycles. A file found again by a shorter chain of
    imports has its own imports followed again from there, so every file within the
    depth limit of some memory file is loaded, whichever order the imports come in."""

    __slots__ = ("files", "home", "known", "outside", "root")

    def __init__(self, home: Path | None, root: Path | None) -> None:
        self.files: list[MemoryFile] = []
        # identity → (depth its imports were followed from, the file; None if unreadable)
        self.known: dict[tuple[int, int], tuple[int, MemoryFile | None]] = {}
        self.home = home
        # The project's real path, when project files must stay inside it; else None.
        self.root = os.path.realpath(root) if root is not None else None
        self.outside: list[Path] = []

    def add(self, path: Path, kind: str, importer: Path | None = None, depth: int = 0) -> None:
        identity = _file_identity(path)
        if identity is None or self._kept_out(path, kind):
            return
        known = self.known.get(identity)
        if known is None:
            content = read_text(path)
            memory = None if content is None else MemoryFile(path, kind, content, importer)
            if memory is not None:
                self.files.append(memory)
        elif depth < known[0] and known[1] is not None:
            memory = known[1]  # found again nearer the top: follow its imports further
        else:
            return
        self.known[identity] = (depth, memory)
        if memory is not None and depth < MAX_IMPORT_DEPTH and "@" in memory.content:
            for target in import_targets(memory.content, memory.path.parent, self.home):
                self.add(target, memory.kind, memory.path, depth + 1)


    def _kept_out(self, path: Path, kind: str) -> bool:
        """A project or local file whose real path is outside the project, noted."""
        if self.root is None or kind == "user":
            return False
        real = os.path.realpath(path)
        if real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep):
            return False
        if path not in self.outside:
            self.outside.append(path)
        return True


def _file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a regular file (following links), else None. A FIFO or device
    named CLAUDE.md is not read: opening it could block the start forever."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # absent (the usual case), unreadable, or a NUL in it
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def read_text(path: Path) -> str | None:
    """The file's text, cut at MAX_BYTES with a note saying so, so one huge file cannot
    fill the context. None (after a warning naming it) when it is not UTF-8 text."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        warn(f"wisp: warning: skipping memory file {path}: {exc.strerror or exc}\n")
        return None
    cut = len(data) > MAX_BYTES
    try:
        # Incremental, so a character split by the cut is dropped rather than an error.
        text = codecs.getincrementaldecoder("utf-8")().decode(data[:MAX_BYTES], final=not cut)
    except UnicodeDecodeError:
        warn(f"wisp: warning: skipping memory file {path}: not readable as UTF-8 text\n")
        return None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if cut:
        text += (f"\n\n[wisp: {path} is larger than {MAX_BYTES // 1024} KB; "
                 "the rest of it was left out]")
    return text


def import_targets(content: str, folder: Path, home: Path | None) -> list[Path]:
    """The files `content` imports with `@path`, in order, that exist as files. Tokens in
    code fences and inline code are examples, not imports; `a@b.com` is an address."""
    targets: list[Path] = []
    for line in _prose_lines(content):
        if "@" not in line:
            continue
        prose = re.sub(_INLINE_CODE, " ", line) if "`" in line else line
        for match in re.finditer(_IMPORT_TOKEN, prose):
            target = _resolve(match.group(1), folder, home)
            if target is not None:
                targets.append(target)
    return targets


def _prose_lines(content: str) -> list[str]:
    """The lines outside fenced code blocks (``` or ~~~, closed by a fence of the same
    character at least as long; an unclosed fence runs to the end, as in Markdown)."""
    lines: list[str] = []
    fence = ""
    for line in content.split("\n"):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence:
            if stripped.startswith(fence) and not stripped.lstrip(fence[0]).strip():
                fence = ""
        elif marker in ("```", "~~~"):
            fence = stripped[:len(stripped) - len(stripped.lstrip(marker[0]))]
        else:
            lines.append(line)
    return lines


def _resolve(token: str, folder: Path, home: Path | None) -> Path | None:
    """The file a token names, or None. Sentence punctuation after a path ("see
    @docs/style.md.") is tried without when the path as written is no file."""
    for candidate in dict.fromkeys((token, token.rstrip(_TRAILING_PUNCTUATION))):
        path = _expand(candidate, folder, home) if candidate else None
        if path is not None and _file_identity(path) is not None:
            return path
    return None


def _expand(candidate: str, folder: Path, home: Path | None) -> Path | None:
    """`~/…` under the home folder, an absolute path as it is, else under `folder`; `..`
    taken away by the text, as Node's `path.resolve` (and so the reference) does."""
    if not candidate.startswith("~"):
        path = folder / candidate  # an absolute candidate replaces `folder`
    elif not candidate.startswith("~/"):
        return None  # `~user/…` is not supported
    elif home is not None:
        path = home / candidate[2:]
    else:
        expanded = os.path.expanduser(candidate)
        if expanded.startswith("~"):
            return None  # no home folder to be found
        path = Path(expanded)
    return Path(os.path.normpath(path))


def memory_reminder(files: list[MemoryFile]) -> str | None:
    """The text the model receives at the start of the first user message: every file's
    content under a heading that says where it came from. None without files."""
    if not files:
        return None
    parts = ["<system-reminder>",
             "Below are the user's own instructions and this project's, read from their "
             "memory files. They take precedence over your default behaviour: where the two "
             "differ, do as these say."]
    for memory in files:
        parts.append(f"\n=== {memory.path} ({_label(memory)}) ===\n{memory.content.strip()}")
    parts.append("</system-reminder>")
    return "\n".join(parts)


def _label(memory: MemoryFile) -> str:
    label = KIND_LABELS.get(memory.kind, memory.kind)
    if memory.imported_from is None:
        return label
    return f"imported by {memory.imported_from}; {label}"
