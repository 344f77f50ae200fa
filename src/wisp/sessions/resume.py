"""Where a session starts: fresh, resumed, continued or forked, and the reference's rules
and phrases for the flags that choose (`--resume`, `--continue`, `--fork-session`,
`--session-id`, `--resume-session-at`, `--resume-drops-turn`).

Resuming restores history only. Nothing of the old process comes back: not its tool
processes, permission grants, model switches or cost.
"""

# No `from __future__ import annotations`: SessionStart is built before the first frame, and a
# NamedTuple's string annotations cost a compile() each; the first compile() of a process
# also builds the AST types (~2 ms). See wisp.runtime.config.
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from wisp import paths
from wisp.errors import UsageError
from wisp.jsontypes import JSON
from wisp.sessions.transcript import TranscriptWriter
from wisp.stamps import new_uuid

if TYPE_CHECKING:
    from wisp.sessions.load import Conversation



class SessionFlags(Protocol):
    """The fields of `wisp.runtime.config.RuntimeConfig` this module reads."""

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
    def resume_drops_turn(self) -> str | None: ...
    @property
    def no_session_persistence(self) -> bool: ...


class SessionNotFound(UsageError):
    """The session to resume cannot be loaded as asked: no such session (or title), no such
    message for `--resume-session-at`, a truncating resume `--resume-drops-turn` refuses.
    The reference prints the message as it is (most without "Error: ") and, with stream-json
    output, also answers with an error `result` for `session_id`, so an SDK raises that
    result's text rather than a bare process failure."""

    def __init__(self, message: str, session_id: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id or new_uuid()


TITLE_NOT_FOUND = (
    "Error: --resume requires a valid session ID or session title when used with --print. "
    "Usage: wisp -p --resume <session-id|title>. Provided value \"{value}\" is not a UUID and "
    "does not match any session title."
)
DROPS_TURN_REJECTED = (
    "Resume rejected by --resume-drops-turn: resuming at {at} would discard entries not "
    "attributable to turn {turn}: {why}"
)
# How much of each transcript's head and tail a title lookup reads, as the SDKs' listing does.
_TITLE_WINDOW = 64 * 1024


class SessionStart(NamedTuple):
    """How a session starts: fresh, resumed or forked. A NamedTuple because print mode
    needs it before its first frame (see wisp.launch.options.Options). No field has a default:
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
    if opts.resume_session_at is not None and opts.resume is None:
        raise UsageError("--resume-session-at requires --resume")
    if opts.resume_drops_turn is not None and opts.resume_session_at is None:
        raise UsageError("--resume-drops-turn requires --resume-session-at")
    if wanted is not None:
        _check_unused(env, opts.cwd, wanted)
    new_id = wanted or new_uuid()
    new_path = paths.transcript_file(env, opts.cwd, new_id)
    if not resuming:
        return SessionStart(new_id, new_path, [], None, [])
    found = _source(opts, env, new_id)
    if found is None:  # --continue with nothing to continue: a new session, as the reference
        return SessionStart(new_id, new_path, [], None, [])
    source_id, source = found
    # A refusal names the session that would have run: the fork's, or the one resumed.
    shown_id = new_id if opts.fork_session else source_id
    conversation = _load(source, source_id, opts.resume_session_at, shown_id)
    if opts.resume_drops_turn is not None:
        assert opts.resume_session_at is not None
        _check_drops_turn(source, opts.resume_session_at, opts.resume_drops_turn, shown_id)
    if not opts.fork_session:
        return SessionStart(source_id, source, conversation.history, conversation.leaf_uuid, [])
    preamble = _relinked(conversation, new_id)
    return SessionStart(
        new_id, new_path, conversation.history, preamble[-1]["uuid"] if preamble else None, preamble
    )


def _check_unused(env: Mapping[str, str], cwd: Path, session_id: str) -> None:
    if paths.transcript_file(env, cwd, session_id).exists():
        raise UsageError(f"Session ID {session_id} is already in use.")


def _source(opts: SessionFlags, env: Mapping[str, str], new_id: str) -> tuple[str, Path] | None:
    if opts.resume is not None:
        return _find(env, opts.cwd, opts.resume, new_id if opts.fork_session else None)
    newest = newest_session(env, opts.cwd)
    return None if newest is None else (newest.stem, newest)


def _find(env: Mapping[str, str], cwd: Path, wanted: str,
          fork_id: str | None) -> tuple[str, Path]:
    """The session `--resume` names: by id (in any project), else by title (this one's)."""
    if not wanted:
        raise UsageError("--resume needs a session ID when used without a terminal")
    if paths.is_uuid(wanted):
        here = paths.transcript_file(env, cwd, wanted)
        if here.is_file():
            return wanted, here
        # A session started in another directory still resumes, from its own file.
        for other in sorted(paths.projects_root(env).glob(f"*/{wanted}.jsonl")):
            if other.is_file():
                return wanted, other
        raise SessionNotFound(f"No conversation found with session ID: {wanted}",
                              fork_id or wanted)
    titled = session_titled(env, cwd, wanted)
    if titled is None:
        raise SessionNotFound(TITLE_NOT_FOUND.format(value=wanted), fork_id)
    return titled.stem, titled


def session_titled(env: Mapping[str, str], cwd: Path, title: str) -> Path | None:
    """The newest transcript of `cwd` whose title (its newest `custom-title`, as the SDKs'
    listing reads it) is `title`, ignoring case."""
    wanted = title.strip().casefold()
    directory = paths.project_dir(env, cwd)
    try:
        files = [p for p in directory.glob("*.jsonl") if paths.is_uuid(p.stem)]
        ranked = sorted(files, key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return None
    for path in ranked:
        found = title_of(path)
        if found is not None and found.strip().casefold() == wanted:
            return path
    return None


def title_of(path: Path) -> str | None:
    """The newest `custom-title` in a transcript's last 64 KiB, else in its first."""
    try:
        with path.open("rb") as f:
            chunks = [f.read(_TITLE_WINDOW)]
            size = f.seek(0, 2)
            if size > _TITLE_WINDOW:
                f.seek(size - _TITLE_WINDOW)
                chunks.insert(0, f.read())
    except OSError:
        return None
    for chunk in chunks:
        for raw in reversed(chunk.splitlines()):
            if b'"custom-title"' not in raw:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(entry, dict) or entry.get("type") != "custom-title":
                continue
            title = entry.get("customTitle")
            if isinstance(title, str) and title:
                return title
    return None


def _load(path: Path, session_id: str, at_uuid: str | None, shown_id: str) -> "Conversation":
    from wisp.sessions.load import load_conversation  # not needed by a fresh session

    try:
        conversation = load_conversation(path, at_uuid)
    except OSError:
        conversation = None
    if conversation is not None:
        if conversation.dropped:
            from wisp.diagnostics import warn
            from wisp.sessions.load import dropped_note

            warn(dropped_note(path, conversation.dropped))
        return conversation
    if at_uuid is not None:
        raise SessionNotFound(f"No message found with message.uuid of: {at_uuid}", shown_id)
    raise SessionNotFound(f"No conversation found with session ID: {session_id}", shown_id)


def _check_drops_turn(path: Path, at_uuid: str, turn: str, shown_id: str) -> None:
    """`--resume-drops-turn`: what resuming at `at_uuid` discards must be the one turn the
    caller means to drop, started by the prompt `turn`: after any leading non-message lines
    it starts with that prompt, and no other prompt follows (tool results may)."""
    from wisp.sessions.load import discarded_after

    def refuse(why: str) -> SessionNotFound:
        return SessionNotFound(DROPS_TURN_REJECTED.format(at=at_uuid, turn=turn, why=why),
                               shown_id)

    if not paths.is_uuid(turn):
        raise refuse(f"declared turn id is not a UUID: {turn}")
    dropped = discarded_after(path, at_uuid)
    messages = [(n, e) for n, e in enumerate(dropped) if e.get("type") in ("user", "assistant")]
    if not messages:
        return
    first_n, first = messages[0]
    if first.get("type") != "user" or first["uuid"] != turn:
        raise refuse("range does not start with the declared turn prompt; first discarded "
                     f"entry {first_n} [type={first.get('type')}, uuid={first['uuid']}]")
    for n, entry in messages[1:]:
        if entry.get("type") == "user" and _is_prompt(entry):
            raise refuse("range contains a user entry not attributable to the declared turn; "
                         f"entry {n} [type=user, uuid={entry['uuid']}]")


def _is_prompt(entry: JSON) -> bool:
    """A user line someone typed (or queued), not a tool's result or a meta line."""
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return False
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return True


def newest_session(env: Mapping[str, str], cwd: Path) -> Path | None:
    """The transcript of `cwd` with the most recent conversation in it (its last message's
    timestamp: renaming or tagging an old session appends a line, and must not make it the
    one `--continue` resumes) that holds a conversation."""
    from wisp.sessions.load import load_conversation

    directory = paths.project_dir(env, cwd)
    try:
        files = [p for p in directory.glob("*.jsonl") if paths.is_uuid(p.stem)]
        ranked = sorted(files, key=last_activity, reverse=True)
    except OSError:
        return None
    for path in ranked:
        try:
            if load_conversation(path) is not None:
                return path
        except OSError:
            continue
    return None


TAIL_BYTES = 64 * 1024  # a transcript's last message is found in its tail


def last_activity(path: Path) -> float:
    """When the session last had a message (the newest `user`/`assistant` line's
    timestamp, read from the file's tail); the file's mtime when none says."""
    from datetime import datetime

    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - TAIL_BYTES))
        tail = handle.read().decode("utf-8", errors="replace").splitlines()
    for line in reversed(tail):
        try:
            entry = json.loads(line)
            if entry.get("type") in ("user", "assistant") and entry.get("timestamp"):
                stamp = str(entry["timestamp"]).replace("Z", "+00:00")
                return datetime.fromisoformat(stamp).timestamp()
        except (ValueError, AttributeError):
            continue
    return path.stat().st_mtime


def _relinked(conversation: "Conversation", session_id: str) -> list[JSON]:
    """A fork's copy of the chain, as the SDKs' `fork_session` writes one: every line gets
    a new uuid (one uuid must never name lines of two files), parents re-linked (lines off
    the message chain, attachments and the like, are not copied), a compaction's
    `logicalParentUuid` mapped, and `forkedFrom` naming the line it copies."""
    mapping = {str(entry["uuid"]): new_uuid() for entry in conversation.entries}
    lines: list[JSON] = []
    parent: str | None = None
    for entry in conversation.entries:
        fresh = mapping[str(entry["uuid"])]
        line = {**entry, "uuid": fresh, "parentUuid": parent, "sessionId": session_id,
                "forkedFrom": {"sessionId": entry.get("sessionId"), "messageUuid": entry["uuid"]}}
        logical = entry.get("logicalParentUuid")
        if isinstance(logical, str):
            line["logicalParentUuid"] = mapping.get(logical, logical)
        line.pop("sourceToolAssistantUUID", None)
        lines.append(line)
        parent = fresh
    return lines
