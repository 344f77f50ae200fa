"""Session: the run state of one conversation. Options stay immutable; this changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

from wisp.engine.usage import UsageLedger
from wisp.jsontypes import JSON
from wisp.permissions.engine import PermissionPolicy
from wisp.permissions.modes import PermissionMode
from wisp.processes import ProcessRegistry
from wisp.stamps import new_uuid
from wisp.values import Record, field


class TranscriptRecorder(Protocol):
    """Persists the conversation as it grows (see `wisp.sessions.transcript`)."""

    def user(self, content: str | list[JSON], uuid: str | None = None) -> str: ...

    def assistant(self, message: JSON, request_id: str | None = None,
                  block_uuids: list[str] | None = None) -> list[str]: ...

    def compacted(self, trigger: str, pre_tokens: int, summary: str,
                  duration_ms: int | None = None) -> str: ...

    def branch_at(self, uuid: str | None) -> None:
        """The next line follows `uuid` (None: a new root), not the last one written: a
        rewound conversation branches there, and a resume follows the newest branch."""


def append_user(history: list[JSON], content: str | list[JSON]) -> None:
    """Adds a user message, merging into a trailing user message so roles still alternate."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if history and history[-1].get("role") == "user":
        previous = history[-1]["content"]
        if isinstance(previous, str):
            previous = [{"type": "text", "text": previous}]
        history[-1] = {"role": "user", "content": [*previous, *blocks]}
    else:
        history.append({"role": "user", "content": content})


class Session(Record):
    cwd: Path
    model: str
    # The rules and the permission mode: the mode lives on the policy and nowhere else
    # (`permission_mode` below reads and writes it there).
    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    session_id: str = field(default_factory=new_uuid)
    history: list[JSON] = field(default_factory=list)
    usage: UsageLedger = field(default_factory=UsageLedger)
    tool_state: dict[str, Any] = field(default_factory=dict)
    # The session's own child processes: killed on interrupt and when its runtime closes.
    processes: ProcessRegistry = field(default_factory=ProcessRegistry)
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    result_count: int = 0
    # Tool names the host allowed for the rest of the session (from `--allowedTools`,
    # permission updates, ...). Rules proper live in the permission engine.
    session_allow: set[str] = field(default_factory=set)
    last_message_uuid: str | None = None
    transcript_path: str | None = None
    last_usage: JSON | None = None  # of the latest model call: drives auto-compaction
    recorder: TranscriptRecorder | None = None  # None: --no-session-persistence

    @property
    def permission_mode(self) -> PermissionMode:
        return self.policy.mode

    @permission_mode.setter
    def permission_mode(self, mode: PermissionMode) -> None:
        self.policy.mode = mode

    # Every change to `history` goes through these, so the transcript cannot miss one.

    def add_user(self, content: str | list[JSON], *, uuid: str | None = None) -> None:
        append_user(self.history, content)
        self.record_user(content, uuid=uuid)

    def record_user(self, content: str | list[JSON], *, uuid: str | None = None) -> None:
        """Transcript only: for tool results written one by one as they finish, before the
        whole batch joins the history."""
        if self.recorder is not None:
            self.last_message_uuid = self.recorder.user(content, uuid)

    def rewind_to(self, history_len: int, parent_uuid: str | None) -> None:
        """Back to the conversation as it was with `history_len` messages, the last of
        them the transcript line `parent_uuid`: what comes next follows it there."""
        del self.history[history_len:]
        self.last_message_uuid = parent_uuid
        if self.recorder is not None:
            self.recorder.branch_at(parent_uuid)

    def add_assistant(self, message: JSON, *, request_id: str | None = None,
                      block_uuids: list[str] | None = None) -> None:
        """`message` is the whole API message; the transcript keeps its id, model, usage
        and real stop_reason, the history only role and content."""
        self.history.append({"role": "assistant", "content": message["content"]})
        if self.recorder is not None:
            written = self.recorder.assistant(message, request_id, block_uuids)
            self.last_message_uuid = written[-1] if written else self.last_message_uuid
