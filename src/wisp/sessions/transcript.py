"""Appends a session to its JSONL transcript as it happens, in Claude Code's line format.

One line per content block of an assistant message and per piece of a user message, each
linked to the previous by `parentUuid`, as Claude Code writes them; the loader merges them
back into API messages. Assistant lines reuse the `uuid` of the stream-json frame that
showed the block, so a client can name one in `--resume-session-at`.

Crash safety: each line is a single `write(2)` on an O_APPEND descriptor, so a `kill -9`
leaves every earlier line whole. No fsync: surviving process death needs only the page
cache; surviving power loss is not worth a disk flush per message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wisp import PROTOCOL_VERSION
from wisp.diagnostics import warn
from wisp.jsonsafe import encode_utf8
from wisp.stamps import iso_now, new_uuid

JSON = dict[str, Any]
# Keys the streaming accumulator leaves on a tool_use whose input was not valid JSON.
_NON_API_KEYS = ("partial_json", "input_error")


def api_block(block: JSON) -> JSON:
    """A content block as the API accepts it back."""
    if any(key in block for key in _NON_API_KEYS):
        return {k: v for k, v in block.items() if k not in _NON_API_KEYS}
    return block


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

    def close(self) -> None:
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
        }
        self.last_uuid = line_uuid
        self._write([*self._pending, entry])
        self._pending = []
        return line_uuid

    def _write(self, entries: list[JSON]) -> None:
        if self._failed:
            return
        # encode_utf8: lone surrogates (undecodable file names, "\udcff" escapes) are
        # stored as U+FFFD; a strict encode would raise and end the run mid-turn.
        data = b"".join(
            encode_utf8(json.dumps(e, ensure_ascii=False, separators=(",", ":"))) + b"\n"
            for e in entries
        )
        try:
            fd = self._open()
            while data:
                data = data[os.write(fd, data) :]
        except OSError as exc:
            # A full disk or a read-only home must not end the run: warn once, go on.
            self._failed = True
            warn(f"wisp: warning: cannot write transcript {self.path}: {exc}\n")

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
