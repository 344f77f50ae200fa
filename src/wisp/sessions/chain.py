"""Walking a transcript's `parentUuid` chain: which line ends the conversation (the
newest leaf) and the lines from the root to it. Shared by resuming (`wisp.sessions.load`)
and by the SDK's session readers (`wisp.sdk._session_chain`), which must agree on it.
"""

from __future__ import annotations

from collections.abc import Iterator

from wisp.jsontypes import JSON

MESSAGE_TYPES = ("user", "assistant")
# What keeps a leaf off the main thread: a subagent's side chain, a meta line.
ASIDE = ("isSidechain", "isMeta")


def by_uuid(entries: list[JSON]) -> dict[str, JSON]:
    return {e["uuid"]: e for e in entries}


def newest_leaf(entries: list[JSON], index: dict[str, JSON],
                aside: tuple[str, ...] = ASIDE) -> JSON | None:
    """The newest user/assistant line at the end of a branch (a line nothing points at,
    or the nearest message above one), preferring a leaf with none of the `aside` flags."""
    parents = {e.get("parentUuid") for e in entries if e.get("parentUuid")}
    leaves: list[JSON] = []
    for entry in entries:
        if entry["uuid"] in parents:
            continue
        message = next((n for n in ancestors(index, entry)
                        if n.get("type") in MESSAGE_TYPES), None)
        if message is not None:
            leaves.append(message)
    main = [e for e in leaves if not any(e.get(flag) for flag in aside)]
    candidates = main or leaves
    if not candidates:
        return None
    order = {id(e): i for i, e in enumerate(entries)}
    return max(candidates, key=lambda e: order[id(e)])


def lineage(index: dict[str, JSON], leaf: JSON) -> list[JSON]:
    """Every line from the root to `leaf`, in order."""
    chain = list(ancestors(index, leaf))
    chain.reverse()
    return chain


def ancestors(index: dict[str, JSON], node: JSON) -> Iterator[JSON]:
    """`node`, its parent, and so on up to the root (a cycle ends the walk)."""
    seen: set[str] = set()
    current: JSON | None = node
    while current is not None and current["uuid"] not in seen:
        seen.add(current["uuid"])
        yield current
        parent = current.get("parentUuid")
        current = index.get(parent) if parent else None
