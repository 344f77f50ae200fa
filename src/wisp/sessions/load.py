"""Reads a transcript back into a valid Messages API history.

Input may be wisp's own file or one Claude Code wrote: lines of many types (attachments,
queue operations, cost state, ...), one assistant line per content block, a torn last line
after a `kill -9`. Only `user` and `assistant` lines become messages; the chain is followed
by `parentUuid` from the newest leaf back to the root, through any other line type that
carries a uuid, so an abandoned branch is never mixed in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from wisp.jsonsafe import MAX_DEPTH, loads_bounded
from wisp.jsontypes import JSON
from wisp.sessions.chain import MESSAGE_TYPES, by_uuid, lineage, newest_leaf
from wisp.sessions.repair import repair_history

_CHAIN_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})
# A line wraps a message a few levels deeper than the frame or tool input it came from,
# which wisp accepted at MAX_DEPTH; anything deeper was not written by wisp.
LINE_MAX_DEPTH = MAX_DEPTH + 16


@dataclass(frozen=True)
class Conversation:
    """What resuming needs from a transcript: the chain's message lines and the history."""

    entries: list[JSON]  # user/assistant lines of the chain, root first
    history: list[JSON]  # API messages, repaired so a request accepts them
    # What the repair dropped as malformed: reason → how many (see repair.py).
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def leaf_uuid(self) -> str | None:
        return self.entries[-1]["uuid"] if self.entries else None


def read_entries(path: Path) -> list[JSON]:
    """Every parseable chain line; corrupt or torn lines and unknown types are skipped."""
    entries: list[JSON] = []
    with path.open("rb") as f:
        for raw in f:
            try:
                entry = loads_bounded(raw, LINE_MAX_DEPTH)
            except ValueError:
                continue  # a torn line (kill -9 mid-write), foreign garbage, too deep
            if (
                isinstance(entry, dict)
                and entry.get("type") in _CHAIN_TYPES
                and isinstance(entry.get("uuid"), str)
            ):
                entries.append(entry)
    return entries


def chain_to(entries: list[JSON], leaf: JSON) -> list[JSON]:
    """The user/assistant lines from the root to `leaf`, in order."""
    return [e for e in lineage(by_uuid(entries), leaf) if e.get("type") in MESSAGE_TYPES]


def discarded_after(path: Path, at_uuid: str) -> list[JSON]:
    """The chain lines a resume at `at_uuid` leaves behind: those after it on the newest
    branch, in order (when `at_uuid` is not on that branch, the branch past the point where
    the two part)."""
    entries = read_entries(path)
    index = by_uuid(entries)
    leaf = newest_leaf(entries, index)
    if leaf is None:
        return []
    branch = lineage(index, leaf)
    at = next((e for e in entries if e["uuid"] == at_uuid), None)
    kept = {e["uuid"] for e in lineage(index, at)} if at is not None else set()
    cut = max((n for n, e in enumerate(branch) if e["uuid"] in kept), default=-1)
    return branch[cut + 1:]


def load_conversation(path: Path, at_uuid: str | None = None) -> Conversation | None:
    """The conversation in `path`, up to `at_uuid` when given. None when the file has no
    message (or no message `at_uuid`)."""
    entries = read_entries(path)
    if at_uuid is not None:
        leaf = next(
            (e for e in entries if e["uuid"] == at_uuid and e.get("type") in MESSAGE_TYPES), None
        )
    else:
        leaf = newest_leaf(entries, by_uuid(entries))
    if leaf is None:
        return None
    chain = [e for e in chain_to(entries, leaf) if _is_model_visible(e)]
    dropped: Counter[str] = Counter()
    history = repair_history([_message_of(e) for e in chain], dropped)
    return Conversation(chain, history, dict(dropped))


def dropped_note(path: Path, dropped: dict[str, int]) -> str:
    """The warning for what loading `path` left out, one line."""
    total = sum(dropped.values())
    parts = "; ".join(f"{why} ({n})" for why, n in sorted(dropped.items()))
    noun = "part" if total == 1 else "parts"
    return (f"wisp: warning: {path}: left out {total} malformed {noun} of the conversation, "
            f"so the API accepts the rest: {parts}\n")


def _is_model_visible(entry: JSON) -> bool:
    """Lines that were part of what the model saw. Claude Code marks display-only lines
    (all but a compaction's summary), and its synthetic API-error messages were never
    model output."""
    if entry.get("isApiErrorMessage"):
        return False
    if entry.get("isVisibleInTranscriptOnly") and not entry.get("isCompactSummary"):
        return False  # a compaction's summary is what the model sees after it
    message = entry.get("message")
    return isinstance(message, dict) and message.get("content") is not None


def _message_of(entry: JSON) -> JSON:
    message = entry["message"]
    role = "assistant" if entry.get("type") == "assistant" else "user"
    return {"role": role, "content": message["content"]}
