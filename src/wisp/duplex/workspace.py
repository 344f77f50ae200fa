"""The host's workspace requests: where the session works (`set_cwd`, `register_repo_root`,
`add_directory`), what is in it (`file_suggestions`, `get_workspace_diff`), what the
Edit tool may assume the model saw (`seed_read_state`), and which binary answers
(`get_binary_version`). Shapes and refusals are in docs/protocol.md ("Every control
subtype").
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from wisp import PROTOCOL_VERSION, __version__
from wisp.errors import ControlError
from wisp.git_config_guard import DIFF_FLAGS, guarded_argv
from wisp.jsontypes import JSON
from wisp.wire import host_requests as h

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

# The reference caps the diff a host shows; past this the answer says `truncated`.
DIFF_LIMIT = 512 * 1024
SUGGESTIONS = 15  # as many as the terminal's @-mention list shows
WALK_LIMIT = 20_000  # files looked at per query: a huge tree answers from its first part
SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})


def register_workspace(server: DuplexServer) -> None:
    w = Workspace(server)
    on = server.dispatcher.on
    on(h.GET_BINARY_VERSION, w.get_binary_version)
    on(h.FILE_SUGGESTIONS, w.file_suggestions)
    on(h.GET_WORKSPACE_DIFF, w.get_workspace_diff)
    on(h.SEED_READ_STATE, w.seed_read_state)
    on(h.SET_CWD, w.set_cwd)
    on(h.REGISTER_REPO_ROOT, w.register_repo_root)
    on(h.ADD_DIRECTORY, w.add_directory)


class Workspace:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server

    async def get_binary_version(self, request: h.GetBinaryVersion) -> JSON:
        # `version` is the protocol wisp speaks (what hosts compare); wisp's own beside it.
        return {"version": PROTOCOL_VERSION, "buildTime": None, "wisp_version": __version__}

    async def file_suggestions(self, request: h.FileSuggestions) -> JSON:
        cwd = self.server.session.cwd
        found = await asyncio.to_thread(suggest, cwd, request["query"])
        return {"suggestions": found}

    async def get_workspace_diff(self, request: h.GetWorkspaceDiff) -> JSON:
        return await workspace_diff(self.server.session.cwd)

    async def seed_read_state(self, request: h.SeedReadState) -> None:
        """The Edit tool's read-before-write check then treats the file as read at
        `mtime` (a file changed since still needs a fresh Read)."""
        path = self._resolve(request["path"])
        self.server.runtime.treat_as_read(path, float(request["mtime"]))

    async def set_cwd(self, request: h.SetCwd) -> JSON:
        session = self.server.session
        target = self._resolve(request["path"])
        before = session.cwd
        if not target.exists():
            return {"status": "not_found", "cwd": str(before), "changed": False,
                    "transcript_relocated": False}
        if not target.is_dir():
            return {"status": "not_a_directory", "cwd": str(before), "changed": False,
                    "transcript_relocated": False}
        if request.get("trust_accepted") is True:
            from wisp.settings.trust import ACCEPTED, record

            vouched = request.get("trusted_directory") or str(target)
            record(Path(vouched), self.server.env, **{ACCEPTED: True})
        changed = target != before
        relocated = changed and self.server.runtime.move_to(target)
        return {"status": "ok", "cwd": str(session.cwd), "changed": changed,
                "transcript_relocated": relocated}

    async def register_repo_root(self, request: h.RegisterRepoRoot) -> JSON:
        directory = await self._add_root(request["directory"])
        if request.get("reload_skills") or request.get("reload_plugins"):
            from wisp.runtime.project import reload_skills

            before = self.server.commands()
            reload_skills(self.server.runtime)
            self.server.commands_changed(before)
        return {"directory": str(directory)}

    async def add_directory(self, request: h.AddDirectory) -> JSON:
        raw = request.get("path", request.get("directory"))
        return {"directory": str(await self._add_root(str(raw)))}

    async def _add_root(self, raw: str) -> Path:
        """A working folder more: tools may read and write there as in the cwd, and MCP
        servers, which may list the session's roots, are told (`roots` declared so)."""
        directory = self._resolve(raw)
        if not directory.is_dir():
            raise ControlError(f"Not a directory: {raw}", "not_a_directory")
        await self.server.runtime.add_working_dir(directory)
        return directory

    def _resolve(self, raw: str) -> Path:
        return (self.server.session.cwd / Path(raw).expanduser()).resolve()


def suggest(cwd: Path, query: str, limit: int = SUGGESTIONS) -> list[JSON]:
    """Paths under `cwd` whose relative path contains the query's characters in order,
    best first: a match in the file name before one spread over folders, shorter paths
    before longer ones. Folders are offered too (with a trailing `/`)."""
    needle = query.lstrip("@").lower()
    scored: list[tuple[tuple[int, int, str], JSON]] = []
    for relative, is_dir in _walk(cwd):
        score = _score(relative.lower(), needle)
        if score is not None:
            shown = relative + "/" if is_dir else relative
            scored.append(((score, len(relative), relative),
                           {"path": shown, "displayText": shown,
                            "type": "directory" if is_dir else "file"}))
    scored.sort(key=lambda pair: pair[0])
    return [entry for _, entry in scored[:limit]]


def _walk(cwd: Path) -> list[tuple[str, bool]]:
    found: list[tuple[str, bool]] = []
    for root, dirs, files in os.walk(cwd):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        base = Path(root).relative_to(cwd)
        found += [(str(base / d), True) for d in dirs]
        found += [(str(base / f), False) for f in sorted(files)]
        if len(found) >= WALK_LIMIT:
            break
    return found


def _score(path: str, needle: str) -> int | None:
    """0: the name starts with the query; 1: the name contains it; 2: the path contains
    it; 3: its characters appear in order; None: no match."""
    name = path.rsplit("/", 1)[-1]
    if name.startswith(needle):
        return 0
    if needle in name:
        return 1
    if needle in path:
        return 2
    position = 0
    for char in needle:
        position = path.find(char, position) + 1
        if position == 0:
            return None
    return 3


async def workspace_diff(cwd: Path) -> JSON:
    """`git diff HEAD` of the working tree (staged and unstaged, untracked files listed by
    name), capped; `{"diff": null}` outside a git repository or without git."""
    git = shutil.which("git")
    if git is None:
        return {"diff": None}
    diff = await _git(git, cwd, "diff", "HEAD", "--no-color", *DIFF_FLAGS)
    if diff is None:
        return {"diff": None}
    untracked = await _git(git, cwd, "ls-files", "--others", "--exclude-standard") or ""
    answer: JSON = {"diff": diff[:DIFF_LIMIT], "truncated": len(diff) > DIFF_LIMIT,
                    "untracked": [line for line in untracked.splitlines() if line]}
    return answer


async def _git(git: str, cwd: Path, *args: str) -> str | None:
    argv = await guarded_argv(git, cwd, *args)  # the repository's own commands stay off
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True)  # its own process group: never signalled with ours
    out, _ = await proc.communicate()
    return out.decode("utf-8", errors="replace") if proc.returncode == 0 else None
