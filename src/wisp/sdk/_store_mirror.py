"""`ClaudeAgentOptions.session_store` for wisp.sdk's sessions: the agent's transcript
reaches the host's store, and a resume can come from the store alone.

Writing: the agent runs with `--session-mirror` and sends each transcript line it writes
as a `transcript_mirror` frame (`filePath`, `entries`). `StoreMirror` keeps them and
appends them to the store, keyed by the file's place under the projects folder, before
the turn's result is handed on (`session_store_flush="eager"`: at once). A store that
fails is reported on stderr and the session goes on: the local transcript has the lines.

Resuming: with `resume` (or `continue_conversation`), the session's entries, subagents'
included, are written from the store into a temporary config folder, which the agent
runs with (`CLAUDE_CONFIG_DIR`), so it resumes what the store holds.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk.session_store import SessionKey, SessionStore, file_path_to_session_key


class StoreMirror:
    def __init__(self, store: SessionStore, projects_dir: Path, eager: bool,
                 report: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.projects_dir = projects_dir
        self.eager = eager
        self._report = report
        self._pending: list[tuple[str, list[JSON]]] = []

    def enqueue(self, file_path: Any, entries: Any) -> None:
        if isinstance(file_path, str) and isinstance(entries, list) and entries:
            self._pending.append((file_path, entries))

    async def flush(self) -> None:
        """Appends what came, in order, one call per run of lines of one file."""
        pending, self._pending = self._pending, []
        for file_path, entries in _runs(pending):
            key = file_path_to_session_key(file_path, str(self.projects_dir))
            if key is None:
                self._warn(f"a transcript outside {self.projects_dir} is not mirrored: "
                           f"{file_path}")
                continue
            try:
                await self.store.append(key, entries)
            except Exception as exc:  # the local transcript is whole: report and go on
                self._warn(f"the session store failed to append {len(entries)} entries: "
                           f"{exc}")

    def _warn(self, text: str) -> None:
        line = f"wisp.sdk: session_store: {text}\n"
        if self._report is not None:
            self._report(line)
        else:
            sys.stderr.write(line)


def _runs(pending: list[tuple[str, list[JSON]]]) -> list[tuple[str, list[JSON]]]:
    runs: list[tuple[str, list[JSON]]] = []
    for file_path, entries in pending:
        if runs and runs[-1][0] == file_path:
            runs[-1][1].extend(entries)
        else:
            runs.append((file_path, list(entries)))
    return runs


async def materialize(store: SessionStore, cwd: str, session_id: str | None
                      ) -> tuple[Path, str] | None:
    """A temporary config folder holding the session (the newest of the project when
    `session_id` is None) as the store has it; with the session's id. None when the store
    has no such session (the agent then says so, as for a session not on disk)."""
    project_key = paths.project_key(cwd)
    if session_id is None:
        try:
            listed = await store.list_sessions(project_key)
        except NotImplementedError:
            return None
        if not listed:
            return None
        session_id = max(listed, key=lambda s: s["mtime"])["session_id"]
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    entries = await store.load(key)
    if not entries:
        return None
    config = Path(tempfile.mkdtemp(prefix="wisp-sdk-store-"))
    folder = config / "projects" / project_key
    _write(folder / f"{session_id}.jsonl", entries)
    try:
        subkeys = await store.list_subkeys({"project_key": project_key,
                                            "session_id": session_id})
    except NotImplementedError:
        subkeys = []
    for subpath in subkeys:
        sub = await store.load({**key, "subpath": subpath})
        if sub:
            _write(folder / session_id / f"{subpath}.jsonl",
                   [e for e in sub if e.get("type") != "agent_metadata"])
    return config, session_id


def _write(path: Path, entries: list[JSON]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries),
                    encoding="utf-8")


def discard(config: Path) -> None:
    shutil.rmtree(config, ignore_errors=True)
