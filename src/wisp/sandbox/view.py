"""The filesystem a sandboxed command sees: which paths are hidden, read-only or writable.

Above: the bubblewrap profile, which turns a `MountPlan` into mount options. Below: the
host filesystem, read with lstat/realpath (symlinks are resolved before masking, so a
link swapped in by an earlier command cannot move a mask off its target).

Hidden (an empty tmpfs over a folder, /dev/null over a file): the paths of Read deny
rules and `filesystem.denyRead`, credential stores in HOME (`filesystem.allowRead` grants
one back), wisp's and Claude Code's configuration folders, `.envrc` and agent settings.
Read-only inside the writable folders: `.git/hooks`, `.git/config`, `.claude`, `.mcp.json`,
IDE folders, and the paths of Edit deny rules and `filesystem.denyWrite`. The ones that
do not exist yet get a placeholder for the command's lifetime (`placeholders`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from wisp.rules import path_matches
from wisp.sandbox import placeholders

# Relative to every writable folder. Read-only: what a later git, IDE or agent run would
# execute or obey. Hidden: what also holds secrets (an agent's settings carry `env`).
READONLY_NAMES = (".git/hooks", ".git/config", ".gitmodules", ".husky", ".claude", ".wisp",
                  ".vscode", ".idea", ".mcp.json", ".claude.json", ".envrc")
HIDDEN_NAMES = (".envrc", ".claude/settings.json", ".claude/settings.local.json")
# Those whose absence is held too: creating them must fail. Each costs a file and a
# mount per command, so only what something runs unasked: git hooks and config, agent
# settings and MCP servers, direnv, and VS Code's folder-open tasks.
PLACEHOLDER_NAMES = frozenset({".git/hooks", ".git/config", ".claude", ".mcp.json", ".envrc",
                               ".vscode"})
# Start-up files in HOME, protected when HOME itself is writable in the sandbox.
HOME_READONLY = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                 ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".inputrc", ".gitconfig",
                 ".config/git", ".config/fish", ".local/bin")
# Credential stores in HOME, hidden unless `filesystem.allowRead` grants them back.
CREDENTIAL_STORES = (".ssh", ".aws", ".config/gcloud", ".azure", ".kube",
                     ".docker/config.json", ".netrc", ".pypirc", ".npmrc", ".gnupg",
                     ".local/share/keyrings", ".password-store", ".git-credentials",
                     ".config/gh", ".config/hub", ".cargo/credentials.toml",
                     ".cargo/credentials", ".terraform.d/credentials.tfrc.json",
                     ".vault-token", ".pgpass", ".my.cnf")
_SCAN_DEPTH = 3
_SCAN_BUDGET = 5000
_SKIP_DIRS = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".cache"})


def inside(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


class MountPlan:
    """bwrap options for the masks: `before` go ahead of the writable binds (a mask that
    holds a writable folder, which the bind then re-exposes), `after` go on top of them.
    `placeholders` are held for the command and released after it."""

    __slots__ = ("after", "before", "hidden", "pinned", "placeholders", "readonly", "remount")

    def __init__(self) -> None:
        self.before: list[str] = []
        # Folders between a writable folder and a mask in it, bound onto themselves: a
        # mount point cannot be renamed, so `mv .git g` cannot carry hooks out of reach.
        self.pinned: list[str] = []
        self.remount: list[str] = []  # masks that hold a writable folder: read-only at last
        self.after: list[str] = []
        self.placeholders: list[str] = []
        self.hidden: list[str] = []  # real paths, for violation reports
        self.readonly: list[str] = []

    def release(self) -> None:
        for path in self.placeholders:
            placeholders.release(path)
        self.placeholders = []


class Planner:
    """Builds the `MountPlan` of each command for one session's folders and rules. What is
    costly (the nested scan, glob expansion) is cached until the folder it covers changes."""

    def __init__(self, writable: Sequence[str], *, hide: Sequence[str], readonly: Sequence[str],
                 deny_read: Sequence[str], deny_write: Sequence[str], allow_read: Sequence[str],
                 home: str, projects: Sequence[str] | None = None) -> None:
        self.writable = tuple(os.path.realpath(p) for p in writable)
        # The folders protected names are looked for in: the working folders, not the
        # private temp folder, whose `.git` or `.envrc` nothing outside would ever run.
        self.projects = self.writable if projects is None else tuple(
            os.path.realpath(p) for p in projects)
        # Outside the writable folders only the user can move things, so those paths are
        # resolved once; below a writable folder, every command resolves them afresh.
        self.hide = tuple(os.path.realpath(p) for p in hide)
        self.readonly = tuple(readonly)
        self.deny_read = tuple(deny_read)
        self.deny_write = tuple(deny_write)
        self.allow_read = tuple(os.path.realpath(os.path.expanduser(p)) for p in allow_read)
        self.home = os.path.realpath(home)
        self._bases = tuple(sorted({*self.writable, self.home}, key=len, reverse=True))
        self._scans: dict[str, tuple[float, tuple[list[str], list[str]]]] = {}
        self._globs: dict[str, tuple[float, list[str]]] = {}

    def plan(self, extra_hidden: Sequence[str] = (), extra_readonly: Sequence[str] = ()
             ) -> MountPlan:
        """`extra_*`: rule patterns read from the session's permission rules right now
        (they can change while it runs)."""
        plan = MountPlan()
        try:
            for path in self._readonly_paths(extra_readonly):
                self._add_readonly(plan, path)
            # Outer folders first: a mask inside a hidden folder is needed only where a
            # writable folder brings part of it back.
            hidden = sorted({self._real(p) for p in self._hidden_paths(extra_hidden)},
                            key=lambda p: (p.count("/"), p))
            for real in hidden:
                self._add_hidden(plan, real)
        except BaseException:
            plan.release()
            raise
        for path in self.allow_read:  # granted back on top of a hidden folder
            if os.path.lexists(path) and any(inside(path, [h]) and path != h
                                             for h in plan.hidden):
                plan.after += ["--ro-bind", path, path]
                self._remask_stores(plan, path)
        return plan

    def _remask_stores(self, plan: MountPlan, granted: str) -> None:
        """A folder granted back whole (a version manager's, in a hidden HOME) keeps the
        credential stores inside it hidden, unless one is granted itself."""
        for name in CREDENTIAL_STORES:
            store = os.path.join(self.home, name)
            if store == granted or not inside(store, [granted]) or self._granted(store):
                continue
            if os.path.isdir(store) and not os.path.islink(store):
                plan.after += ["--tmpfs", store]
            elif os.path.lexists(store):
                plan.after += ["--ro-bind", "/dev/null", store]
            else:
                continue
            plan.hidden.append(store)

    # What to mask ----------------------------------------------------------------------

    def _readonly_paths(self, patterns: Sequence[str]) -> list[str]:
        found = [os.path.join(root, name) for root in self.projects for name in READONLY_NAMES]
        found += self._git_dirs()
        if inside(os.path.realpath(self.home), self.writable):
            found += [os.path.join(self.home, name) for name in HOME_READONLY]
        for root in self.projects:
            found += self._scan(root)[0]
        found += list(self.readonly)
        for pattern in (*self.deny_write, *patterns):
            found += self._expand(pattern)
        return found

    def _hidden_paths(self, patterns: Sequence[str]) -> list[str]:
        found = [os.path.join(root, name) for root in self.projects for name in HIDDEN_NAMES]
        found += [os.path.join(self.home, name) for name in CREDENTIAL_STORES
                  if not self._granted(os.path.join(self.home, name))]
        found += list(self.hide)
        for root in self.projects:
            found += self._scan(root)[1]
        for pattern in (*self.deny_read, *patterns):
            found += self._expand(pattern)
        return found

    def _granted(self, store: str) -> bool:
        """Whether this credential store itself is granted. A grant of a folder that
        holds it (HOME, /) is not a grant of the store: the user named a folder, not
        their keys. A grant of a file inside the store is bound back on its own."""
        real = self._real(store)
        return real in self.allow_read

    def _real(self, path: str) -> str:
        """realpath, cheaper below a folder known to be real: only the components below
        it are looked at (one lstat each), and a link among them is resolved in full."""
        for base in self._bases:
            if path.startswith(base + "/"):
                return _resolve(base, path[len(base) + 1:])
        return os.path.realpath(path)

    def _git_dirs(self) -> list[str]:
        """A worktree's `.git` is a file naming its git folder: protect that folder's
        hooks and config (and the main repository's, through `commondir`) as well."""
        found = []
        for root in self.projects:
            try:
                with open(os.path.join(root, ".git"), encoding="utf-8") as pointer:
                    line = pointer.readline().strip()
            except OSError:
                continue
            if not line.startswith("gitdir:"):
                continue
            gitdir = os.path.join(root, line.removeprefix("gitdir:").strip())
            found += [os.path.join(gitdir, "hooks"), os.path.join(gitdir, "config")]
            try:
                with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as common:
                    main = os.path.join(gitdir, common.read().strip())
                found += [os.path.join(main, "hooks"), os.path.join(main, "config")]
            except OSError:
                pass
        return found

    # Adding masks ----------------------------------------------------------------------

    def _pin(self, plan: MountPlan, real: str) -> None:
        root = next((r for r in self.writable if real.startswith(r + "/")), None)
        if root is None:
            return
        parts = real[len(root) + 1:].split("/")[:-1]
        folder = root
        for part in parts:
            folder = f"{folder}/{part}"
            if folder not in plan.pinned and os.path.isdir(folder):
                plan.pinned.append(folder)

    def _place(self, plan: MountPlan, real: str, options: list[str]) -> None:
        holds_root = any(inside(root, [real]) for root in self.writable)
        (plan.before if holds_root else plan.after).extend(options)
        self._pin(plan, real)
        if holds_root and options[0] == "--tmpfs":
            plan.remount.append(real)

    def _add_hidden(self, plan: MountPlan, real: str) -> None:
        if real in plan.placeholders:
            return  # /dev/null already
        if real in plan.hidden or (inside(real, plan.hidden)
                                   and not inside(real, self.writable)):
            return
        try:
            is_dir = stat.S_ISDIR(os.stat(real).st_mode)
        except OSError:
            return
        plan.hidden.append(real)
        if is_dir:
            self._place(plan, real, ["--tmpfs", real])
        else:
            self._place(plan, real, ["--ro-bind", "/dev/null", real])

    def _add_readonly(self, plan: MountPlan, path: str) -> None:
        real = self._real(path)
        if real in plan.readonly:
            return
        if placeholders.is_held(real):  # another command's: share it, never outlive it
            self._hold(plan, real)
            return
        if os.path.exists(real):
            plan.readonly.append(real)
            if inside(real, self.writable):  # elsewhere the read-only root holds it
                plan.after += ["--ro-bind", real, real]
                self._pin(plan, real)
            return
        name = self._placeholder_name(path)
        if name is None:
            return
        missing = _first_missing(real, next((r for r in self.writable
                                             if real.startswith(r + "/")), ""))
        if missing is None or not inside(os.path.dirname(missing), self.writable):
            return
        self._hold(plan, missing)

    def _hold(self, plan: MountPlan, missing: str) -> None:
        if missing in plan.placeholders:
            return
        if placeholders.acquire(missing):
            plan.placeholders.append(missing)
            plan.readonly.append(missing)
            plan.after += ["--ro-bind", "/dev/null", missing]
            self._pin(plan, missing)

    def _placeholder_name(self, path: str) -> str | None:
        for root in self.writable:
            if path.startswith(root + "/"):
                name = path[len(root) + 1:]
                return name if name in PLACEHOLDER_NAMES else None
        return None

    # Cached walks ----------------------------------------------------------------------

    def _scan(self, root: str) -> tuple[list[str], list[str]]:
        """Protected names below the top of `root` (nested repositories, agent folders),
        down to a few levels; cached until `root` itself changes."""
        try:
            mtime = os.stat(root).st_mtime
        except OSError:
            return [], []
        cached = self._scans.get(root)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        found: tuple[list[str], list[str]] = ([], [])
        budget = [_SCAN_BUDGET]
        for entry in _walk(root, _SCAN_DEPTH, budget, top=True):
            name = os.path.basename(entry)
            if name == ".git":
                found[0].extend((os.path.join(entry, "hooks"), os.path.join(entry, "config")))
            elif name in (".claude", ".mcp.json"):
                found[0].append(entry)
                if name == ".claude":
                    found[1].extend(os.path.join(entry, n.split("/", 1)[1])
                                    for n in HIDDEN_NAMES if n.startswith(".claude/"))
            elif name == ".envrc":
                found[1].append(entry)
        self._scans[root] = (mtime, found)
        return found

    def _expand(self, pattern: str) -> list[str]:
        """The existing paths a rule pattern covers: the pattern itself when it has no
        wildcard, the folder before a trailing `**`, else what a bounded walk matches."""
        magic = [i for i, part in enumerate(pattern.split("/")) if any(c in part for c in "*?[{")]
        if not magic:
            return [pattern.rstrip("/") or "/"]
        parts = pattern.split("/")
        prefix = "/".join(parts[:magic[0]]) or "/"
        if "/".join(parts[magic[0]:]) in ("**", "**/*", "*"):
            return [prefix]
        try:
            mtime = os.stat(prefix).st_mtime
        except OSError:
            return []
        cached = self._globs.get(pattern)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        budget = [_SCAN_BUDGET * 4]
        hits = [p for p in _walk(prefix, 64, budget) if path_matches(pattern, p)]
        if budget[0] <= 0:
            hits = [prefix]  # too big to expand: hide all of it rather than miss a match
        self._globs[pattern] = (mtime, hits)
        return hits


def _walk(root: str, depth: int, budget: list[int], top: bool = False) -> Iterable[str]:
    """Every path below `root` to `depth` levels, within `budget` entries (shared and
    decremented). Links are reported but not followed."""
    if depth <= 0 or budget[0] <= 0:
        return
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        budget[0] -= 1
        if budget[0] <= 0:
            return
        if top and entry.name in (".git", ".claude"):
            continue  # the top level's own are covered by READONLY_NAMES
        yield entry.path
        if entry.name in _SKIP_DIRS or entry.name == ".git":
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, depth - 1, budget)


def _resolve(base: str, rel: str) -> str:
    """realpath(base/rel) for a real `base`."""
    path = base
    parts = rel.split("/")
    for i, part in enumerate(parts):
        path = f"{path}/{part}"
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            return "/".join((path, *parts[i + 1:]))  # missing: nothing below can be a link
        if is_link:
            return os.path.realpath("/".join((path, *parts[i + 1:])))
    return path


def _first_missing(path: str, known: str = "") -> str | None:
    """The first component of `path` (real, absolute) that does not exist; `known` is a
    folder above it that does."""
    parts = path.split("/")
    for i in range(max(2, known.count("/") + 2), len(parts) + 1):
        candidate = "/".join(parts[:i])
        if not os.path.lexists(candidate):
            return candidate
        if not os.path.isdir(candidate) and i < len(parts):
            return None  # a file stands where a folder would be: nothing can be made below
    return None
