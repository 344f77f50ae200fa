"""Edits as a person reads them: hunks with the file's own line numbers and three lines
of context, removed and added lines on a red and a green background, the words that
changed within a changed line on a stronger one, and a one-line summary ("Added 2 lines,
removed 1 line").

Hunks have the `structuredPatch` shape the Edit and Write tools report in their result
data (`oldStart`, `newStart`, `lines` each starting with " ", "-" or "+"), so the diff
shown after an edit is the tool's own, and the one shown before approval is computed
here the same way from the file as it is now.
"""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text

from wisp.jsontypes import JSON
from wisp.textsafe import safe

CONTEXT = 3
MAX_LINES = 40  # diff lines shown; the rest is counted
MAX_CHARS = 2_000_000  # difflib is quadratic at worst: past this, no diff
READ_CAP = 2_000_000
REMOVED, ADDED = "on #4b1818", "on #173d1a"
REMOVED_WORD, ADDED_WORD = "bold on #8a2a2a", "bold on #2c6e31"
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")


def hunks(before: str, after: str, context: int = CONTEXT) -> list[JSON]:
    if len(before) + len(after) > MAX_CHARS:
        return []
    import difflib

    a, b = before.splitlines(), after.splitlines()
    out: list[JSON] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(
            context):
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[a1:a2])
            else:
                lines.extend("-" + line for line in a[a1:a2])
                lines.extend("+" + line for line in b[b1:b2])
        out.append({"oldStart": group[0][1] + 1, "newStart": group[0][3] + 1,
                    "lines": lines})
    return out


def counts(patch: list[JSON]) -> tuple[int, int]:
    """Lines added and removed."""
    lines = [line for hunk in patch for line in _lines_of(hunk)]
    return (sum(1 for line in lines if line.startswith("+")),
            sum(1 for line in lines if line.startswith("-")))


def summary(patch: list[JSON]) -> str:
    added, removed = counts(patch)
    parts = []
    if added:
        parts.append(f"Added {added} line{'s' if added != 1 else ''}")
    if removed:
        word = "removed" if parts else "Removed"
        parts.append(f"{word} {removed} line{'s' if removed != 1 else ''}")
    return ", ".join(parts) or "No lines changed"


def render(patch: list[JSON], indent: int = 0, limit: int = MAX_LINES) -> Text:
    """The hunks as numbered lines (old numbers for removed lines, new ones otherwise),
    a dim "⋮" between hunks, at most `limit` lines and then how many more."""
    rows: list[tuple[str, int, str]] = []
    for i, hunk in enumerate(patch):
        if i:
            rows.append(("⋮", 0, ""))
        rows.extend(_numbered(hunk))
    width = max((len(str(n)) for _, n, _ in rows), default=1)
    out = Text()
    pad = " " * indent
    shown = rows[:limit]
    partners = _partners(shown)
    for j, (sign, number, text) in enumerate(shown):
        out.append(pad)
        if sign == "⋮":
            out.append(" " * width + " ⋮\n", style="dim")
            continue
        partner = partners[j]
        out.append(f"{number:>{width}} ", style="dim")
        out.append_text(_body(sign, safe(text), None if partner is None else safe(partner)))
        out.append("\n")
    if len(rows) > limit:
        out.append(f"{pad}… +{len(rows) - limit} more diff lines\n", style="dim italic")
    out.rstrip()
    return out


def _lines_of(hunk: JSON) -> list[str]:
    lines = hunk.get("lines")
    return [str(line) for line in lines] if isinstance(lines, list) else []


def _numbered(hunk: JSON) -> list[tuple[str, int, str]]:
    old, new = int(hunk.get("oldStart") or 1), int(hunk.get("newStart") or 1)
    rows = []
    for line in _lines_of(hunk):
        sign, text = (line[:1] or " "), line[1:]
        if sign == "-":
            rows.append(("-", old, text))
            old += 1
        elif sign == "+":
            rows.append(("+", new, text))
            new += 1
        else:
            rows.append((" ", new, text))
            old, new = old + 1, new + 1
    return rows


def _partners(rows: list[tuple[str, int, str]]) -> list[str | None]:
    """For word highlighting: the k-th removed line of a run pairs with the k-th added
    line of the run that follows it, and the other way round."""
    partners: list[str | None] = [None] * len(rows)
    i = 0
    while i < len(rows):
        if rows[i][0] != "-":
            i += 1
            continue
        minus_end = i
        while minus_end < len(rows) and rows[minus_end][0] == "-":
            minus_end += 1
        plus_end = minus_end
        while plus_end < len(rows) and rows[plus_end][0] == "+":
            plus_end += 1
        for k in range(min(minus_end - i, plus_end - minus_end)):
            partners[i + k] = rows[minus_end + k][2]
            partners[minus_end + k] = rows[i + k][2]
        i = plus_end
    return partners


def _body(sign: str, text: str, partner: str | None) -> Text:
    if sign == " ":
        return Text("  " + text, style="dim")
    line_style, word_style = (REMOVED, REMOVED_WORD) if sign == "-" else (ADDED, ADDED_WORD)
    out = Text(f"{sign} ", style=line_style)
    if partner is None:
        out.append(text, style=line_style)
        return out
    import difflib

    mine, theirs = _TOKENS.findall(text), _TOKENS.findall(partner)
    matcher = difflib.SequenceMatcher(None, theirs, mine, autojunk=False)
    for tag, _, _, b1, b2 in matcher.get_opcodes():
        out.append("".join(mine[b1:b2]), style=line_style if tag == "equal" else word_style)
    return out


# Before approval: the edit applied to the file as it is now -----------------------------


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist or cannot be read whole."""
    try:
        with path.open("rb") as handle:
            data = handle.read(READ_CAP + 1)
    except OSError:
        return None
    if len(data) > READ_CAP:
        return None
    return data.decode("utf-8", "replace")


def edit_patch(path: Path, old: str, new: str, replace_all: bool) -> list[JSON] | None:
    """The Edit's hunks in the real file, or None when the text to replace is not found
    there (the tool will refuse it; the caller shows the snippet instead)."""
    current = read_text(path)
    if current is None:
        return hunks("", new) if old == "" else None
    if old == "":
        return hunks(current, new) if not current.strip() else None
    if old not in current:
        return None
    after = current.replace(old, new) if replace_all else current.replace(old, new, 1)
    return hunks(current, after)


def write_patch(path: Path, content: str) -> tuple[list[JSON], bool]:
    """The Write's hunks, and whether the file exists already."""
    current = read_text(path)
    return hunks(current or "", content), current is not None


def relative(path: str, cwd: Path) -> str:
    """`path` as a person reads it: relative to the working folder when inside it."""
    try:
        target = Path(path)
        if not target.is_absolute():
            return path
        return str(target.relative_to(cwd)) if target != cwd else "."
    except ValueError:
        return path
