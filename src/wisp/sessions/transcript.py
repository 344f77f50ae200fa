"""Appends a session to its JSONL transcript as it happens, in Claude Code's line format.

One line per content block of an assistant message and per piece of a user message, each
linked to the previous by `parentUuid`, as Claude Code writes them; the loader merges them
back into API messages. Assistant lines reuse the `uuid` of the stream-json frame that
showed the block, so a client can name one in `--resume-session-at`.

Besides the messages, the lines the SDKs' session helpers read, as Claude Code writes them:
`gitBranch` on every message line; a `last-prompt` line after each prompt and again when the
turn ends (`list_sessions` takes its summary from the newest one in the file's last 64 KiB,
so a session whose first prompt is too big to parse is still listed); `custom-title` (and
`agent-name`) when the session is renamed, appended again at a turn's end once 32 KiB have
been written since, so the title stays in that window. Before re-appending a title the file
is read back for a newer one another writer (the SDKs' `rename_session`) appended meanwhile.

Crash safety: each line is a single `write(2)` on an O_APPEND descriptor, so a `kill -9`
leaves every earlier line whole. No fsync: surviving process death needs only the page
cache; surviving power loss is not worth a disk flush per message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from pathlib import Path

from wisp import PROTOCOL_VERSION
from wisp.diagnostics import warn
from wisp.jsonsafe import encode_utf8
from wisp.jsontypes import JSON
from wisp.stamps import iso_now, new_uuid

# Keys the streaming accumulator leaves on a tool_use whose input was not valid JSON.
_NON_API_KEYS = ("partial_json", "input_error")
# A `last-prompt` holds at most this many characters of the prompt, then "…".
PROMPT_SUMMARY_MAX = 200
# The SDKs read metadata from a file's last 64 KiB: a title older than this is re-appended.
TITLE_REFRESH_BYTES = 32 * 1024
_HEAD_REF = "ref: refs/heads/"
# Where written lines are also sent (`--session-mirror`: the duplex server's
# `transcript_mirror` frames), with the file's path. A context variable, not a global:
# sessions served in one process (wisp.sdk in-process) each mirror only their own.
Mirror = Callable[[str, list[JSON]], None]
mirror_to: ContextVar[Mirror | None] = ContextVar("wisp_transcript_mirror", default=None)


def api_block(block: JSON) -> JSON:
    """A content block as the API accepts it back."""
    if any(key in block for key in _NON_API_KEYS):
        return {k: v for k, v in block.items() if k not in _NON_API_KEYS}
    return block


def prompt_summary(content: str | list[JSON]) -> str | None:
    """A prompt as a `last-prompt` line gives it: its first non-blank text, on one line,
    cut to 200 characters and "…"."""
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
    for raw in texts:
        text = raw.replace("\n", " ").strip()
        if text:
            if len(text) > PROMPT_SUMMARY_MAX:
                return text[:PROMPT_SUMMARY_MAX].rstrip() + "\u2026"
            return text
    return None


def git_branch(cwd: str) -> str:
    """The branch Claude Code records on each line: what HEAD names, or "HEAD" when it is
    detached or `cwd` is not in a repository. Read from the files, without running git."""
    folder = Path(cwd)
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
                if not text.startswith("gitdir:"):
                    return "HEAD"
                head_file = candidate / text[len("gitdir:"):].strip() / "HEAD"
            elif dot_git.is_dir():
                head_file = dot_git / "HEAD"
            else:
                continue
            head = head_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return "HEAD"
        return head[len(_HEAD_REF):] if head.startswith(_HEAD_REF) else "HEAD"
    return "HEAD"


class TranscriptWriter:
    """Implements `wisp.engine.session.TranscriptRecorder` for one session file.

    The file (mode 0600) and its directory are created on the first line, so a run that
    fails before saying anything leaves nothing behind. `preamble` lines (a fork's copied
    history) are written first.
    """

    def __init__(
        self,
        path: Path,
        *,
        session_id: str,
        cwd: str,
        parent_uuid: str | None = None,
        preamble: Iterable[JSON] = (),
        entrypoint: str = "sdk-cli",
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.last_uuid = parent_uuid
        self.entrypoint = entrypoint
        self._pending = list(preamble)
        self._fd: int | None = None
        self._failed = False
        self._branch: str | None = None  # read on the first line
        self.title: str | None = None  # the newest custom title known
        self._prompt: str | None = None  # the current prompt, as `last-prompt` gives it
        self._prompt_pending = False  # its line still to come: `last-prompt` follows it
        self._written = 0  # bytes this writer wrote
        self._trailer_mark = 0  # `_written` when metadata was last appended
        self._title_mark: int | None = None  # `_written` when the title was last looked at
        self._scanned = 0  # how far the file has been read back for titles

    # TranscriptRecorder ------------------------------------------------------------------

    def user(self, content: str | list[JSON], uuid: str | None = None) -> str:
        return self._append("user", {"role": "user", "content": content}, uuid)

    def assistant(
        self, message: JSON, request_id: str | None = None, block_uuids: list[str] | None = None
    ) -> list[str]:
        """One line per content block, all carrying the whole API message around it."""
        content = [api_block(b) for b in message.get("content") or []]
        uuids = block_uuids if block_uuids and len(block_uuids) == len(content) else None
        written = []
        for index, block in enumerate(content):
            body = {**message, "content": [block]}
            extra = {"requestId": request_id} if request_id else {}
            written.append(self._append("assistant", body, uuids[index] if uuids else None, extra))
        return written

    def branch_at(self, uuid: str | None) -> None:
        self.last_uuid = uuid

    def compacted(self, trigger: str, pre_tokens: int, summary: str,
                  duration_ms: int | None = None) -> str:
        """A compaction, as Claude Code records it: a `compact_boundary` line that starts
        a new chain (`parentUuid: null`, the old leaf as `logicalParentUuid`), then the
        summary as a user line. A resumed session's history starts from that summary.
        Returns the summary line's uuid."""
        metadata: JSON = {"trigger": trigger, "preTokens": pre_tokens}
        if duration_ms is not None:
            metadata["durationMs"] = duration_ms
        boundary = new_uuid()
        self._pending.append({
            "parentUuid": None, "logicalParentUuid": self.last_uuid, "isSidechain": False,
            "type": "system", "subtype": "compact_boundary",
            "content": "Conversation compacted", "isMeta": False, "timestamp": iso_now(),
            "uuid": boundary, "level": "info", "compactMetadata": metadata,
            "userType": "external", "entrypoint": self.entrypoint, "cwd": self.cwd,
            "sessionId": self.session_id, "version": PROTOCOL_VERSION,
        })
        self.last_uuid = boundary
        return self._append("user", {"role": "user", "content": summary}, None,
                            {"isVisibleInTranscriptOnly": True, "isCompactSummary": True})

    def begin_prompt(self, content: str | list[JSON]) -> None:
        """A prompt starts a turn: its line, the next user line written, is followed by a
        `last-prompt` line."""
        self._prompt = prompt_summary(content)
        self._prompt_pending = self._prompt is not None

    def end_turn(self) -> None:
        """Appends the metadata the SDKs read from a file's tail, when anything was written
        since it last was: `last-prompt`, and the title when it may have left that tail."""
        if self._fd is None or self._written == self._trailer_mark:
            return
        lines = [self._last_prompt_line()] if self._prompt is not None else []
        if self._title_mark is None or self._written - self._title_mark >= TITLE_REFRESH_BYTES:
            self._title_mark = self._written
            title = self._latest_title()
            if title:
                lines.append({"type": "custom-title", "customTitle": title,
                              "sessionId": self.session_id})
        self._write(lines)
        self._trailer_mark = self._written

    def set_title(self, title: str, *, agent_name: bool = True) -> None:
        """Renames the session now: a `custom-title` line (and `agent-name`, as a rename
        from the host writes), creating the file if no message has been written yet."""
        self.title = title
        lines: list[JSON] = [{"type": "custom-title", "customTitle": title,
                              "sessionId": self.session_id}]
        if agent_name:
            lines.append({"type": "agent-name", "agentName": title, "sessionId": self.session_id})
        trailer_current = self._written == self._trailer_mark
        self._write([*self._pending, *lines])
        self._pending = []
        self._title_mark = self._written
        if trailer_current:  # a title alone does not call for another `last-prompt`
            self._trailer_mark = self._written

    def close(self) -> None:
        self.end_turn()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # Lines -------------------------------------------------------------------------------

    def _append(self, kind: str, message: JSON, uuid: str | None, extra: JSON | None = None) -> str:
        line_uuid = uuid or new_uuid()
        entry: JSON = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "type": kind,
            "message": message,
            **(extra or {}),
            "uuid": line_uuid,
            "timestamp": iso_now(),
            "userType": "external",
            "entrypoint": self.entrypoint,
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": PROTOCOL_VERSION,
            "gitBranch": self._git_branch(),
        }
        self.last_uuid = line_uuid
        lines = [*self._pending, entry]
        if kind == "user" and self._prompt_pending:
            self._prompt_pending = False
            lines.append(self._last_prompt_line())
        self._write(lines)
        self._pending = []
        return line_uuid

    def _git_branch(self) -> str:
        if self._branch is None:
            self._branch = git_branch(self.cwd)
        return self._branch

    def _last_prompt_line(self) -> JSON:
        return {"type": "last-prompt", "lastPrompt": self._prompt, "leafUuid": self.last_uuid,
                "sessionId": self.session_id}

    def _latest_title(self) -> str | None:
        """The newest `custom-title` in the file: read back from where the last look ended,
        so a resumed session's title and one the SDKs' `rename_session` appended meanwhile
        are both seen."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._scanned)
                data = f.read()
        except OSError:
            return self.title
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self._scanned += end
        for raw in reversed(data[:end].splitlines()):
            if b'"custom-title"' not in raw:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("type") == "custom-title" \
                    and isinstance(entry.get("customTitle"), str):
                self.title = entry["customTitle"] or None
                break
        return self.title

    def _write(self, entries: list[JSON]) -> None:
        if self._failed:
            return
        # encode_utf8: lone surrogates (undecodable file names, "\udcff" escapes) are
        # stored as U+FFFD; a strict encode would raise and end the run mid-turn.
        data = b"".join(
            encode_utf8(json.dumps(e, ensure_ascii=False, separators=(",", ":"))) + b"\n"
            for e in entries
        )
        if not data:
            return
        try:
            fd = self._open()
            self._written += len(data)
            while data:
                data = data[os.write(fd, data) :]
        except OSError as exc:
            # A full disk or a read-only home must not end the run: warn once, go on.
            self._failed = True
            warn(f"wisp: warning: cannot write transcript {self.path}: {exc}\n")
            return
        mirror = mirror_to.get()
        if mirror is not None:
            mirror(str(self.path), entries)

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if _ends_mid_line(self.path):
            # A process killed mid-write (ours or Claude Code's) can leave a torn last
            # line; start ours on a fresh one so it is not glued to the fragment.
            os.write(fd, b"\n")
        self._fd = fd
        return fd


def _ends_mid_line(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False
