"""The closest known name to a mistyped one, for "did you mean …?".

A leaf shared by the argv front ends (unknown flags) and the settings loader (unknown
keys). The rule is commander's, which the reference CLI uses, so wisp suggests what it
would: Damerau–Levenshtein distance (a swap of two neighbours counts as one edit), at
most 3 edits, and more than 40% of the name left intact. Plain Python: no `difflib`
import on a path that runs before the first frame.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_EDITS = 3
MIN_SIMILARITY = 0.4


def distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and
    transpositions of neighbours, each costing 1."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[len(b)]


def closest(word: str, candidates: Iterable[str], *, strip: str = "") -> str | None:
    """The candidate nearest `word`, or None when none is near enough. `strip` is a prefix
    ignored when comparing (commander compares flags without their leading dashes)."""
    bare = word.removeprefix(strip)
    best: str | None = None
    best_distance = MAX_EDITS + 1
    for candidate in candidates:
        other = candidate.removeprefix(strip)
        edits = distance(bare, other)
        length = max(len(bare), len(other))
        if edits < best_distance and length and (length - edits) / length > MIN_SIMILARITY:
            best, best_distance = candidate, edits
    return best
