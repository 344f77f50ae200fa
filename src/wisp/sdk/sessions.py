"""Reading (and renaming, tagging, deleting) the sessions wisp keeps on disk, with the
official SDK's session helpers' signatures and answers.

The store is wisp's own (`wisp.sessions.paths`): `<config dir>/projects/<project key>/
<session id>.jsonl`, the config dir being `CLAUDE_CONFIG_DIR`, else `WISP_CONFIG_DIR`, else
`~/.wisp`. The files are in Claude Code's line format, so everything here reads Claude
Code's transcripts too when the two share a config dir.

Listing stays cheap: a session's metadata comes from its size, its mtime and the first and
last 64 KiB of the file, searched as text rather than parsed, as the official SDK does.
Only `get_session_messages` reads a whole file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from wisp.sessions import paths
from wisp.sessions.load import read_entries
from wisp.stamps import iso_now, new_uuid

JSON = dict[str, Any]
# How much of a file's head and of its tail a listing reads.
LITE_READ_BUF_SIZE = 64 * 1024
FIRST_PROMPT_MAX = 200
GIT_TIMEOUT_SECONDS = 5


@dataclass
class SDKSessionInfo:
    """One session as `list_sessions` and `get_session_info` describe it. Times are
    milliseconds since the epoch; `summary` is the title, else the latest prompt or summary
    recorded, else the first prompt."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """A user or assistant line of a session's conversation; `message` is the API message
    as stored. The parent fields are only set for subagent messages."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


# Where sessions are --------------------------------------------------------------------------


def _projects_root() -> Path:
    return paths.projects_root(os.environ)


def _canonical(directory: str | os.PathLike[str]) -> str:
    try:
        resolved = os.path.realpath(directory)
    except OSError:
        resolved = os.fspath(directory)
    return unicodedata.normalize("NFC", resolved)


def _project_dir(project_path: str) -> Path | None:
    """The store directory of a project. A long path's key ends in a hash, which other
    writers may compute differently: then any directory with the same cut-off prefix."""
    key = paths.project_key(project_path)
    root = _projects_root()
    if (root / key).is_dir():
        return root / key
    if len(key) <= paths.MAX_SANITIZED_LENGTH:
        return None
    prefix = key[: paths.MAX_SANITIZED_LENGTH] + "-"
    try:
        return next((d for d in root.iterdir() if d.is_dir() and d.name.startswith(prefix)), None)
    except OSError:
        return None


def _worktrees(cwd: str) -> list[str]:
    """The git worktrees of the repository holding `cwd` (none outside a repository)."""
    try:
        proc = subprocess.run(
            ["git", "worktree", "list", "--porcelain"], cwd=cwd, capture_output=True,
            text=True, timeout=GIT_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    if proc.returncode != 0:
        return []
    return [
        unicodedata.normalize("NFC", line.removeprefix("worktree "))
        for line in proc.stdout.split("\n")
        if line.startswith("worktree ")
    ]


def _candidate_dirs(directory: str | None) -> Iterator[tuple[Path, str | None]]:
    """Where a session of `directory` may be, in search order, each with the project path
    it stands for: the project's own directory, then its worktrees'; every project when no
    directory is given."""
    if not directory:
        try:
            entries = list(_projects_root().iterdir())
        except OSError:
            return
        for entry in entries:
            yield entry, None
        return
    canonical = _canonical(directory)
    found = _project_dir(canonical)
    if found is not None:
        yield found, canonical
    for tree in _worktrees(canonical):
        if tree != canonical:
            other = _project_dir(tree)
            if other is not None:
                yield other, tree


def _session_file(session_id: str, directory: str | None) -> tuple[Path, str | None] | None:
    """The first non-empty transcript of the session, and its project path."""
    for project, project_path in _candidate_dirs(directory):
        path = project / f"{session_id}.jsonl"
        try:
            if path.stat().st_size > 0:
                return path, project_path
        except OSError:
            continue
    return None


# Metadata from a file's head and tail ------------------------------------------------------


class _Lite(NamedTuple):
    mtime: int
    size: int
    head: str
    tail: str


def _read_lite(path: Path) -> _Lite | None:
    try:
        with path.open("rb") as f:
            st = os.fstat(f.fileno())
            head_bytes = f.read(LITE_READ_BUF_SIZE)
            if not head_bytes:
                return None
            head = head_bytes.decode("utf-8", errors="replace")
            tail = head
            if st.st_size > LITE_READ_BUF_SIZE:
                f.seek(st.st_size - LITE_READ_BUF_SIZE)
                tail = f.read(LITE_READ_BUF_SIZE).decode("utf-8", errors="replace")
            return _Lite(int(st.st_mtime * 1000), st.st_size, head, tail)
    except OSError:
        return None


def _field_pattern(key: str) -> re.Pattern[str]:
    # "key":"value" (or with one space after the colon), the value up to its closing quote.
    return re.compile('"' + re.escape(key) + r'": ?"([^"\\]*(?:\\.[^"\\]*)*)"', re.DOTALL)


_FIELD_PATTERNS: dict[str, re.Pattern[str]] = {}


def _field_values(text: str, key: str) -> Iterator[str]:
    """Every string value of `key` in raw JSONL text, in order; text may be cut mid-line."""
    pattern = _FIELD_PATTERNS.get(key)
    if pattern is None:
        pattern = _FIELD_PATTERNS[key] = _field_pattern(key)
    for match in pattern.finditer(text):
        raw = match.group(1)
        if "\\" not in raw:
            yield raw
            continue
        try:
            value = json.loads(f'"{raw}"')
        except ValueError:
            value = raw
        yield value if isinstance(value, str) else raw


def _first_field(text: str, key: str) -> str | None:
    return next(_field_values(text, key), None)


def _last_field(text: str, key: str) -> str | None:
    last = None
    for last in _field_values(text, key):  # noqa: B007 (the loop keeps the last)
        pass
    return last


# User lines that are not a prompt someone typed.
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>"
    r"|\[Request interrupted by user[^\]]*\]"
    r"|\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$"
    r"|\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_USER_MARKS = ('"type":"user"', '"type": "user"')
_SKIPPED_MARKS = (
    '"tool_result"', '"isMeta":true', '"isMeta": true',
    '"isCompactSummary":true', '"isCompactSummary": true',
)


def _user_texts(line: str) -> list[str]:
    if not any(m in line for m in _USER_MARKS) or any(m in line for m in _SKIPPED_MARKS):
        return []
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"] for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _first_prompt(head: str) -> str:
    """The first prompt a person typed, on one line and cut to 200 characters; else the
    name of the first slash command; else ""."""
    command = ""
    for line in head.split("\n"):
        for raw in _user_texts(line):
            text = raw.replace("\n", " ").strip()
            if not text:
                continue
            named = _COMMAND_NAME.search(text)
            if named:
                command = command or named.group(1)
                continue
            if _NOT_A_PROMPT.match(text):
                continue
            if len(text) > FIRST_PROMPT_MAX:
                text = text[:FIRST_PROMPT_MAX].rstrip() + "…"
            return text
    return command


def _epoch_ms(iso: str | None) -> int | None:
    if not iso:
        return None
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1000)
    except ValueError:
        return None


def _info(session_id: str, lite: _Lite, project_path: str | None) -> SDKSessionInfo | None:
    """None for a subagent's transcript and for one with nothing to call it by."""
    head, tail = lite.head, lite.tail
    first_line = head.split("\n", 1)[0]
    if '"isSidechain":true' in first_line or '"isSidechain": true' in first_line:
        return None
    title = (
        _last_field(tail, "customTitle") or _last_field(head, "customTitle")
        or _last_field(tail, "aiTitle") or _last_field(head, "aiTitle") or None
    )
    prompt = _first_prompt(head) or None
    summary = (
        title or _last_field(tail, "lastPrompt") or _last_field(tail, "summary") or prompt
    )
    if not summary:
        return None
    # Only a line that is a tag entry: "tag" is a common key in tool inputs.
    tag_line = next((ln for ln in reversed(tail.split("\n")) if ln.startswith('{"type":"tag"')),
                    None)
    return SDKSessionInfo(
        session_id=session_id,
        summary=summary,
        last_modified=lite.mtime,
        file_size=lite.size,
        custom_title=title,
        first_prompt=prompt,
        git_branch=_last_field(tail, "gitBranch") or _first_field(head, "gitBranch") or None,
        cwd=_first_field(head, "cwd") or project_path or None,
        tag=(_last_field(tag_line, "tag") or None) if tag_line else None,
        created_at=_epoch_ms(_first_field(head, "timestamp")),
    )


def _sessions_in(project: Path, project_path: str | None) -> list[SDKSessionInfo]:
    try:
        files = list(project.iterdir())
    except OSError:
        return []
    found = []
    for path in files:
        stem = path.name.removesuffix(".jsonl")
        if stem == path.name or not paths.is_uuid(stem):
            continue
        lite = _read_lite(path)
        info = _info(stem, lite, project_path) if lite is not None else None
        if info is not None:
            found.append(info)
    return found


def _newest_per_id(sessions: list[SDKSessionInfo]) -> list[SDKSessionInfo]:
    newest: dict[str, SDKSessionInfo] = {}
    for info in sessions:
        kept = newest.get(info.session_id)
        if kept is None or info.last_modified > kept.last_modified:
            newest[info.session_id] = info
    return list(newest.values())


def _page(sessions: list[SDKSessionInfo], limit: int | None, offset: int) -> list[SDKSessionInfo]:
    sessions.sort(key=lambda s: s.last_modified, reverse=True)
    if offset > 0:
        sessions = sessions[offset:]
    if limit is not None and limit > 0:
        sessions = sessions[:limit]
    return sessions


def _project_sessions(directory: str, include_worktrees: bool) -> list[SDKSessionInfo]:
    canonical = _canonical(directory)
    trees = _worktrees(canonical) if include_worktrees else []
    if len(trees) <= 1:
        own = _project_dir(canonical)
        return _sessions_in(own, canonical) if own is not None else []
    root = _projects_root()
    try:
        projects = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        own = _project_dir(canonical)
        return _sessions_in(own, canonical) if own is not None else []
    # The most specific worktree first, so a nested worktree is not taken for its parent.
    keyed = sorted(((paths.project_key(t), t) for t in trees), key=lambda kt: -len(kt[0]))
    found: list[SDKSessionInfo] = []
    seen: set[str] = set()
    own = _project_dir(canonical)  # a subdirectory of a worktree has its own sessions
    if own is not None:
        seen.add(own.name)
        found.extend(_sessions_in(own, canonical))
    for project in projects:
        if project.name in seen:
            continue
        for key, tree in keyed:
            long_key = len(key) >= paths.MAX_SANITIZED_LENGTH
            if project.name == key or (long_key and project.name.startswith(key + "-")):
                seen.add(project.name)
                found.extend(_sessions_in(project, tree))
                break
    return _newest_per_id(found)


def list_sessions(
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    include_worktrees: bool = True,
) -> list[SDKSessionInfo]:
    """Sessions, most recently written first: those of `directory` (and of the other
    worktrees of its git repository, unless `include_worktrees` is False), or of every
    project when no directory is given. `offset` and `limit` page through the result."""
    if directory:
        found = _project_sessions(directory, include_worktrees)
    else:
        try:
            projects = [d for d in _projects_root().iterdir() if d.is_dir()]
        except OSError:
            projects = []
        found = _newest_per_id([s for p in projects for s in _sessions_in(p, None)])
    return _page(found, limit, offset)


def get_session_info(session_id: str, directory: str | None = None) -> SDKSessionInfo | None:
    """One session's metadata, looked up where `get_session_messages` looks; None when it
    is not found, is a subagent's, or has nothing to call it by."""
    if not paths.is_uuid(session_id):
        return None
    for project, project_path in _candidate_dirs(directory):
        lite = _read_lite(project / f"{session_id}.jsonl")
        if lite is not None:
            return _info(session_id, lite, project_path)
    return None


# The conversation ---------------------------------------------------------------------------

_MESSAGE_TYPES = ("user", "assistant")
_CHAIN_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})


def _leaf(entries: list[JSON], by_uuid: dict[str, JSON]) -> JSON | None:
    """The newest user/assistant line ending a branch, preferring the main thread."""
    parents = {e.get("parentUuid") for e in entries if e.get("parentUuid")}
    position = {e["uuid"]: i for i, e in enumerate(entries)}
    leaves: list[JSON] = []
    for entry in entries:
        if entry["uuid"] in parents:
            continue
        node: JSON | None = entry
        walked: set[str] = set()
        while node is not None and node["uuid"] not in walked:
            walked.add(node["uuid"])
            if node.get("type") in _MESSAGE_TYPES:
                leaves.append(node)
                break
            parent = node.get("parentUuid")
            node = by_uuid.get(parent) if parent else None
    main = [
        e for e in leaves if not (e.get("isSidechain") or e.get("teamName") or e.get("isMeta"))
    ]
    candidates = main or leaves
    if not candidates:
        return None
    best = candidates[0]
    for candidate in candidates[1:]:
        if position.get(candidate["uuid"], -1) > position.get(best["uuid"], -1):
            best = candidate
    return best


def _conversation_chain(entries: list[JSON]) -> list[JSON]:
    """The lines from the root to the newest main-thread leaf, following `parentUuid`,
    with the parts of a parallel tool turn that the chain skips put back."""
    by_uuid = {e["uuid"]: e for e in entries}
    leaf = _leaf(entries, by_uuid)
    if leaf is None:
        return []
    chain: list[JSON] = []
    seen: set[str] = set()
    node: JSON | None = leaf
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        node = by_uuid.get(parent) if parent else None
    chain.reverse()
    return _ParallelTurns(by_uuid, chain, seen).restored()


def _message_id(entry: JSON) -> str | None:
    if entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    mid = message.get("id") if isinstance(message, dict) else None
    return mid if isinstance(mid, str) and mid else None


def _block_ids(entry: JSON, block_type: str, key: str) -> list[str]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        b[key] for b in content
        if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(key), str)
    ]


def _is_tool_result(entry: JSON) -> bool:
    """A user line carrying a tool result, with a parent."""
    parent = entry.get("parentUuid")
    if entry.get("type") != "user" or not isinstance(parent, str) or not parent:
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _same_writer(a: JSON, b: JSON) -> bool:
    return bool(a.get("isSidechain")) == bool(b.get("isSidechain")) and (
        a.get("agentId") == b.get("agentId")
    )


def _timestamp(entry: JSON) -> str:
    stamp = entry.get("timestamp")
    return stamp if isinstance(stamp, str) else ""


class _ParallelTurns:
    """Claude Code writes a response with N tool calls as N chained assistant lines, and
    each result's parent is its own call's line, so the results fork the file and the
    `parentUuid` walk keeps only the branch the conversation went on from. This puts the
    other calls and results of each response on the chain back, right after the response's
    last line on the chain, siblings first, each group in timestamp order."""

    def __init__(self, by_uuid: dict[str, JSON], chain: list[JSON], seen: set[str]) -> None:
        self.by_uuid, self.chain, self.seen = by_uuid, chain, seen
        self.responses: dict[str, list[JSON]] = {}  # message id -> its assistant lines
        self.caller: dict[str, JSON | None] = {}  # tool_use id -> its line (None: ambiguous)
        self.results_of: dict[str, list[JSON]] = {}  # assistant uuid -> results filed there
        self._answered_on_chain: set[str] | None = None
        self._position: dict[str, int] | None = None

    def restored(self) -> list[JSON]:
        assistants = [e for e in self.chain if e.get("type") == "assistant"]
        anchors = {mid: e for e in assistants if (mid := _message_id(e))}
        if not anchors:
            return self.chain
        self._index()
        inserts: dict[str, list[JSON]] = {}
        done: set[str] = set()
        for entry in assistants:
            mid = _message_id(entry)
            if not mid or mid in done:
                continue
            done.add(mid)
            recovered = self._recover(self.responses.get(mid, [entry]))
            if recovered:
                self.seen.update(e["uuid"] for e in recovered)
                inserts[anchors[mid]["uuid"]] = recovered
        if not inserts:
            return self.chain
        out: list[JSON] = []
        for entry in self.chain:
            out.append(entry)
            out.extend(inserts.get(entry["uuid"], ()))
        return out

    def _index(self) -> None:
        results: list[JSON] = []
        for entry in self.by_uuid.values():
            mid = _message_id(entry)
            if mid:
                self.responses.setdefault(mid, []).append(entry)
                for call in _block_ids(entry, "tool_use", "id"):
                    if call not in self.caller:
                        self.caller[call] = entry
                    else:
                        owner = self.caller[call]
                        same = owner is not None and _message_id(owner) == mid
                        self.caller[call] = entry if same else None
            elif _is_tool_result(entry):
                results.append(entry)
        for result in results:
            self.results_of.setdefault(result["parentUuid"], []).append(result)
            source = result.get("sourceToolAssistantUUID")
            source_entry = self.by_uuid.get(source) if isinstance(source, str) else None
            if source_entry is not None and _same_writer(result, source_entry):
                self.results_of.setdefault(source_entry["uuid"], []).append(result)
            for call in _block_ids(result, "tool_result", "tool_use_id"):
                owner = self.caller.get(call)
                if owner is not None and _same_writer(result, owner):
                    self.results_of.setdefault(owner["uuid"], []).append(result)

    def _recover(self, group: list[JSON]) -> list[JSON]:
        members = {m["uuid"] for m in group}
        siblings = [m for m in group if m["uuid"] not in self.seen]
        results: list[JSON] = []
        strays: list[JSON] = []  # filed under the response but parented elsewhere
        collected: set[str] = set()
        for member in group:
            for result in self.results_of.get(member["uuid"], ()):
                if result["uuid"] in self.seen or result["uuid"] in collected:
                    continue
                collected.add(result["uuid"])
                (results if result["parentUuid"] in members else strays).append(result)
        if strays:
            results.extend(self._open_call_answers(strays, results, members))
        if not siblings and not results:
            return []
        return sorted(siblings, key=_timestamp) + sorted(results, key=_timestamp)

    def _open_call_answers(
        self, strays: list[JSON], results: list[JSON], members: set[str]
    ) -> list[JSON]:
        """The strays that answer a call of this response nothing has answered yet."""
        if self._answered_on_chain is None or self._position is None:
            self._answered_on_chain = {
                c for e in self.chain for c in _block_ids(e, "tool_result", "tool_use_id")
            }
            self._position = {uid: i for i, uid in enumerate(self.by_uuid)}
        answered = set(self._answered_on_chain)
        for result in results:
            answered.update(_block_ids(result, "tool_result", "tool_use_id"))
        position = self._position
        taken = []
        for stray in sorted(strays, key=lambda e: position[e["uuid"]]):
            calls = _block_ids(stray, "tool_result", "tool_use_id")
            if any(
                c not in answered and (o := self.caller.get(c)) is not None
                and o["uuid"] in members
                for c in calls
            ):
                answered.update(calls)
                taken.append(stray)
        return taken


def _is_visible(entry: JSON) -> bool:
    return entry.get("type") in _MESSAGE_TYPES and not (
        entry.get("isMeta") or entry.get("isSidechain") or entry.get("teamName")
    )


def get_session_messages(
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """The user and assistant messages of a session's main conversation, oldest first
    (a parallel tool turn whole); [] when the session is not found. `offset` and `limit`
    page through them."""
    if not paths.is_uuid(session_id):
        return []
    found = _session_file(session_id, directory)
    if found is None:
        return []
    try:
        entries = read_entries(found[0])
    except OSError:
        return []
    messages = [
        SessionMessage(
            type="user" if e.get("type") == "user" else "assistant",
            uuid=e.get("uuid", ""),
            session_id=e.get("sessionId", ""),
            message=e.get("message"),
        )
        for e in _conversation_chain(entries)
        if _is_visible(e)
    ]
    if limit is not None and limit > 0:
        return messages[offset : offset + limit]
    return messages[offset:] if offset > 0 else messages


# Changing sessions --------------------------------------------------------------------------


def _append(session_id: str, line: JSON, directory: str | None) -> None:
    """Appends one metadata line to the session's transcript, in one write, starting a new
    line first if the file ends in a torn one. Never creates a file."""
    data = json.dumps(line, separators=(",", ":")) + "\n"
    for project, _ in _candidate_dirs(directory):
        try:
            # No O_CREAT: a missing file fails here instead of being made.
            fd = os.open(project / f"{session_id}.jsonl", os.O_RDWR | os.O_APPEND)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                continue
            raise
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                continue  # an empty file is not the session
            torn = os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if torn else "") + data).encode("utf-8"))
            return
        finally:
            os.close(fd)
    where = f"in project directory for {directory}" if directory else "in any project directory"
    raise FileNotFoundError(f"Session {session_id} not found {where}")


def rename_session(session_id: str, title: str, directory: str | None = None) -> None:
    """Sets the session's title (the last one set wins). Raises ValueError for a bad id or
    an empty title, FileNotFoundError when the session is not found."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")
    _append(
        session_id,
        {"type": "custom-title", "customTitle": stripped, "sessionId": session_id},
        directory,
    )


# Invisible or direction-changing characters a tag must not hide.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ue000-\uf8ff]")
_FORMAT_CATEGORIES = frozenset({"Cf", "Co", "Cn"})


def _clean_tag(tag: str) -> str:
    text = tag
    for _ in range(10):  # NFKC can expose more to strip; stop once nothing changes
        cleaned = unicodedata.normalize("NFKC", text)
        cleaned = "".join(c for c in cleaned if unicodedata.category(c) not in _FORMAT_CATEGORIES)
        cleaned = _INVISIBLE.sub("", cleaned)
        if cleaned == text:
            break
        text = cleaned
    return text.strip()


def tag_session(session_id: str, tag: str | None, directory: str | None = None) -> None:
    """Sets the session's tag, or clears it with None (the last one set wins)."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if tag is not None:
        tag = _clean_tag(tag)
        if not tag:
            raise ValueError("tag must be non-empty (use None to clear)")
    # The type must come first: listings find tag lines by their opening.
    _append(session_id, {"type": "tag", "tag": tag or "", "sessionId": session_id}, directory)


def delete_session(session_id: str, directory: str | None = None) -> None:
    """Removes the session's transcript and its directory of subagent transcripts."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    found = _session_file(session_id, directory)
    if found is None:
        where = f" in project directory for {directory}" if directory else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    path = found[0]
    try:
        path.unlink()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"Session {session_id} not found") from exc
    shutil.rmtree(path.parent / session_id, ignore_errors=True)


@dataclass
class ForkSessionResult:
    """What `fork_session` made: the new session's id."""

    session_id: str


_FORK_DROPPED_KEYS = ("teamName", "agentName", "slug", "sourceToolAssistantUUID")


def fork_session(
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Copies a session's main thread (up to and including `up_to_message_id`) into a new
    session beside it, every line under a new uuid, and titles the copy: `title`, else the
    source's title or first prompt followed by " (fork)"."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if up_to_message_id and not paths.is_uuid(up_to_message_id):
        raise ValueError(f"Invalid up_to_message_id: {up_to_message_id}")
    found = _session_file(session_id, directory)
    if found is None:
        where = f" in project directory for {directory}" if directory else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    source = found[0]
    raw = source.read_bytes()
    entries, replacements = _fork_source(raw, session_id)
    new_id = new_uuid()
    lines = _forked_lines(entries, session_id, new_id, up_to_message_id)
    now = iso_now()
    if replacements:
        lines.append({"type": "content-replacement", "sessionId": new_id,
                      "replacements": replacements, "uuid": new_uuid(), "timestamp": now})
    name = title.strip() if title else ""
    if not name:
        head = raw[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
        tail = raw[-LITE_READ_BUF_SIZE:].decode("utf-8", errors="replace")
        derived = (
            _last_field(tail, "customTitle") or _last_field(head, "customTitle")
            or _last_field(tail, "aiTitle") or _last_field(head, "aiTitle")
            or _first_prompt(head)
        )
        name = f"{derived or 'Forked session'} (fork)"
    lines.append({"type": "custom-title", "sessionId": new_id, "customTitle": name,
                  "uuid": new_uuid(), "timestamp": now})
    data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    fd = os.open(source.parent / f"{new_id}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)
    return ForkSessionResult(new_id)


def _fork_source(raw: bytes, session_id: str) -> tuple[list[JSON], list[Any]]:
    """The main thread's chain lines, and the session's content replacements."""
    entries: list[JSON] = []
    replacements: list[Any] = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind in _CHAIN_TYPES and isinstance(entry.get("uuid"), str):
            if not entry.get("isSidechain"):
                entries.append(entry)
        elif (kind == "content-replacement" and entry.get("sessionId") == session_id
              and isinstance(entry.get("replacements"), list)):
            replacements.extend(entry["replacements"])
    return entries, replacements


def _forked_lines(
    entries: list[JSON], session_id: str, new_id: str, up_to: str | None
) -> list[JSON]:
    """The copied lines under new uuids. Progress lines are left out and their children
    re-linked to the nearest kept ancestor; the last line is stamped now, which is how a
    resume finds the leaf."""
    if up_to:
        cut = next((i for i, e in enumerate(entries) if e["uuid"] == up_to), None)
        if cut is None:
            raise ValueError(f"Message {up_to} not found in session {session_id}")
        entries = entries[: cut + 1]
    kept = [e for e in entries if e.get("type") != "progress"]
    if not kept:
        raise ValueError(f"Session {session_id} has no messages to fork")
    renamed = {e["uuid"]: new_uuid() for e in entries}
    by_uuid = {e["uuid"]: e for e in entries}
    now = iso_now()
    lines: list[JSON] = []
    for index, entry in enumerate(kept):
        parent = entry.get("parentUuid")
        while parent and (above := by_uuid.get(parent)) is not None:
            if above.get("type") != "progress":
                break
            parent = above.get("parentUuid")
        else:
            parent = None  # no kept ancestor in the copy
        logical = entry.get("logicalParentUuid")
        copy = {
            **entry,
            "uuid": renamed[entry["uuid"]],
            "parentUuid": renamed.get(parent) if parent else None,
            "logicalParentUuid": renamed.get(logical) if logical else logical,
            "sessionId": new_id,
            "timestamp": now if index == len(kept) - 1 else entry.get("timestamp", now),
            "isSidechain": False,
            "forkedFrom": {"sessionId": session_id, "messageUuid": entry["uuid"]},
        }
        for key in _FORK_DROPPED_KEYS:
            copy.pop(key, None)
        lines.append(copy)
    return lines


__all__ = [
    "ForkSessionResult",
    "SDKSessionInfo",
    "SessionMessage",
    "delete_session",
    "fork_session",
    "get_session_info",
    "get_session_messages",
    "list_sessions",
    "rename_session",
    "tag_session",
]
