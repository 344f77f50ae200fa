"""Where a session starts: fresh, resumed, continued or forked, and the reference's rules
and phrases for the flags that choose (`--resume`, `--continue`, `--fork-session`,
`--session-id`, `--resume-session-at`).

Resuming restores history only. Nothing of the old process comes back: not its tool
processes, permission grants, model switches or cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from wisp.errors import UsageError
from wisp.sessions import paths
from wisp.sessions.transcript import TranscriptWriter
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.sessions.load import Conversation

JSON = dict[str, Any]


class SessionFlags(Protocol):
    """The fields of `wisp.cli.options.Options` this module reads."""

    @property
    def cwd(self) -> Path: ...
    @property
    def resume(self) -> str | None: ...
    @property
    def continue_session(self) -> bool: ...
    @property
    def fork_session(self) -> bool: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def resume_session_at(self) -> str | None: ...
    @property
    def no_session_persistence(self) -> bool: ...


class SessionNotFound(UsageError):
    """No transcript to resume. The reference prints this one without "Error: "."""


class SessionStart(NamedTuple):
    """How a session starts: fresh, resumed or forked. A NamedTuple because print mode
    needs it before its first frame (see wisp.cli.options.Options). No field has a default:
    a shared default list would become every fresh session's history."""

    session_id: str
    path: Path  # the transcript new lines go to
    history: list[JSON]  # the session's own list: the engine appends to it
    parent_uuid: str | None  # the line new lines chain onto
    preamble: list[JSON]  # a fork's copied lines

    def writer(self, cwd: Path, env: Mapping[str, str]) -> TranscriptWriter:
        return TranscriptWriter(
            self.path,
            session_id=self.session_id,
            cwd=str(cwd),
            parent_uuid=self.parent_uuid,
            preamble=self.preamble,
            entrypoint=env.get("CLAUDE_CODE_ENTRYPOINT") or "sdk-cli",
        )


def resolve_start(opts: SessionFlags, env: Mapping[str, str]) -> SessionStart:
    """Raises UsageError (or SessionNotFound) with the reference's phrases."""
    resuming = opts.resume is not None or opts.continue_session
    wanted = opts.session_id
    if wanted is not None and not paths.is_uuid(wanted):
        raise UsageError("Invalid session ID. Must be a valid UUID.")
    if wanted is not None and resuming and not opts.fork_session:
        raise UsageError("--session-id with --continue or --resume also needs --fork-session.")
    if wanted is not None:
        _check_unused(env, opts.cwd, wanted)
    new_id = wanted or new_uuid()
    new_path = paths.transcript_file(env, opts.cwd, new_id)
    if not resuming:
        return SessionStart(new_id, new_path, [], None, [])
    source_id, source = _source(opts, env)
    conversation = _load(source, source_id, opts.resume_session_at)
    if not opts.fork_session:
        return SessionStart(source_id, source, conversation.history, conversation.leaf_uuid, [])
    preamble = _relinked(conversation, new_id)
    return SessionStart(
        new_id, new_path, conversation.history, preamble[-1]["uuid"] if preamble else None, preamble
    )


def _check_unused(env: Mapping[str, str], cwd: Path, session_id: str) -> None:
    if paths.transcript_file(env, cwd, session_id).exists():
        raise UsageError(f"Session ID {session_id} is already in use.")


def _source(opts: SessionFlags, env: Mapping[str, str]) -> tuple[str, Path]:
    if opts.resume is not None:
        return opts.resume, _find(env, opts.cwd, opts.resume)
    newest = newest_session(env, opts.cwd)
    if newest is None:
        raise SessionNotFound("No conversation found to continue")
    return newest.stem, newest


def _find(env: Mapping[str, str], cwd: Path, session_id: str) -> Path:
    if not session_id:
        raise UsageError("--resume needs a session ID when used without a terminal")
    if paths.is_uuid(session_id):
        here = paths.transcript_file(env, cwd, session_id)
        if here.is_file():
            return here
        # A session started in another directory still resumes, from its own file.
        for other in sorted(paths.projects_root(env).glob(f"*/{session_id}.jsonl")):
            if other.is_file():
                return other
    raise SessionNotFound(f"No conversation found with session ID: {session_id}")


def _load(path: Path, session_id: str, at_uuid: str | None) -> Conversation:
    from wisp.sessions.load import load_conversation  # not needed by a fresh session

    try:
        conversation = load_conversation(path, at_uuid)
    except OSError:
        conversation = None
    if conversation is not None:
        return conversation
    if at_uuid is not None:
        raise UsageError(f"No message with uuid {at_uuid} in session {session_id}.")
    raise SessionNotFound(f"No conversation found with session ID: {session_id}")


def newest_session(env: Mapping[str, str], cwd: Path) -> Path | None:
    """The most recently written transcript of `cwd` that holds a conversation."""
    from wisp.sessions.load import load_conversation

    directory = paths.project_dir(env, cwd)
    try:
        files = [p for p in directory.glob("*.jsonl") if paths.is_uuid(p.stem)]
        ranked = sorted(files, key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return None
    for path in ranked:
        try:
            if load_conversation(path) is not None:
                return path
        except OSError:
            continue
    return None


def _relinked(conversation: Conversation, session_id: str) -> list[JSON]:
    """A fork's copy of the chain: same lines, new session id, parents re-linked because
    lines off the message chain (attachments, ...) are not copied."""
    lines: list[JSON] = []
    parent: str | None = None
    for entry in conversation.entries:
        lines.append({**entry, "parentUuid": parent, "sessionId": session_id})
        parent = entry["uuid"]
    return lines
