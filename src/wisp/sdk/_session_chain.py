"""Rebuilding a session's main conversation from its transcript lines, as the official
SDK's `get_session_messages` does: follow `parentUuid` links back from the newest leaf,
skip sidechains and meta lines, and keep a parallel tool turn (several assistant lines of
one message, their results interleaved) whole.
"""

from __future__ import annotations

from wisp.jsontypes import JSON
from wisp.sessions.chain import ASIDE, MESSAGE_TYPES, by_uuid, lineage, newest_leaf

# The line types that make up a conversation (fork_session copies these, sidechains aside).
CHAIN_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})


def conversation_chain(entries: list[JSON]) -> list[JSON]:
    """The lines from the root to the newest main-thread leaf, following `parentUuid`,
    with the parts of a parallel tool turn that the chain skips put back."""
    index = by_uuid(entries)
    leaf = newest_leaf(entries, index, (*ASIDE, "teamName"))
    if leaf is None:
        return []
    chain = lineage(index, leaf)
    return _ParallelTurns(index, chain, {e["uuid"] for e in chain}).restored()


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


def is_visible(entry: JSON) -> bool:
    return entry.get("type") in MESSAGE_TYPES and not (
        entry.get("isMeta") or entry.get("isSidechain") or entry.get("teamName")
    )
