"""Unified-diff hunks in the `structuredPatch` shape that stream-json clients expect."""

from __future__ import annotations

from typing import Any

# difflib is quadratic in the worst case; past this size the patch is not worth the wait.
_MAX_PATCH_CHARS = 2_000_000


def structured_patch(old: str, new: str, context: int = 3) -> list[dict[str, Any]]:
    if len(old) + len(new) > _MAX_PATCH_CHARS:
        return []
    import difflib  # only once a file is edited or overwritten

    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[dict[str, Any]] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[a1:a2])
                continue
            lines.extend("-" + line for line in a[a1:a2])
            lines.extend("+" + line for line in b[b1:b2])
        a_start, a_end = group[0][1], group[-1][2]
        b_start, b_end = group[0][3], group[-1][4]
        hunks.append(
            {
                "oldStart": a_start + 1,
                "oldLines": a_end - a_start,
                "newStart": b_start + 1,
                "newLines": b_end - b_start,
                "lines": lines,
            }
        )
    return hunks
