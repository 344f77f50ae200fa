"""Front matter: the `---`-fenced `key: value` header of the Markdown files Claude Code
users keep (commands, agents, skills, output styles).

Read by a small line parser instead of a YAML library: the keys are few and flat, and
these files are read on every start that has them, where importing `yaml` would cost more
than all the parsing. Broken front matter makes the whole file the body, never an error:
one stray file must not take a session down.
"""

from __future__ import annotations

import re
from pathlib import Path

from wisp.rules import split_rule_list

# Compiled by `re` on first use (and cached there), not at import.
_KEY_LINE = r"([A-Za-z][A-Za-z0-9_-]*)\s*:(?:\s*(.*))?"
_BLOCK_MARKERS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_DESCRIPTION_LIMIT = 80
TRUE_WORDS = frozenset({"true", "yes", "on", "1"})

FieldValue = str | list[str]


def normalise_text(text: str) -> str:
    """A BOM and Windows line ends removed, so files from any editor parse alike."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def read_markdown(path: Path) -> tuple[dict[str, FieldValue], str] | None:
    """(fields, body) of a Markdown file; None when it cannot be read as UTF-8 text."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return split_front_matter(normalise_text(text))



def split_front_matter(text: str) -> tuple[dict[str, FieldValue], str]:
    """(fields, body). Without a well-formed block the whole text is the body and there
    are no fields: a half-parsed header would silently drop prompt text."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return {}, text
    fields = _parse_fields(lines[1:end])
    if fields is None:
        return {}, text
    return fields, "\n".join(lines[end + 1:])


def _parse_fields(lines: list[str]) -> dict[str, FieldValue] | None:
    """`key: value` lines, with indented continuation lines and `- item` lists under a
    key. Keys are lower-cased; None when a line fits none of these forms."""
    fields: dict[str, FieldValue] = {}
    key: str | None = None
    separator = " "  # how continuation lines join: "\n" after a `|` block marker
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = re.fullmatch(_KEY_LINE, line)
        if match is not None:
            key, raw = match.group(1).lower(), (match.group(2) or "").strip()
            separator = "\n" if raw.startswith("|") else " "
            fields[key] = "" if raw in _BLOCK_MARKERS else _unquote(raw)
        elif key is not None and (line[0].isspace() or stripped.startswith("-")):
            fields[key] = _continue(fields[key], stripped, separator)
        else:
            return None
    return fields


def _continue(value: FieldValue, stripped: str, separator: str) -> FieldValue:
    """Adds one continuation line to a field: a list item, or more text."""
    if stripped == "-" or stripped.startswith("- "):
        item = _unquote(stripped[1:].strip())
        if isinstance(value, list):
            return [*value, item]
        return [value, item] if value else [item]
    if isinstance(value, list):
        return [*value[:-1], f"{value[-1]} {stripped}"] if value else [stripped]
    return f"{value}{separator}{stripped}" if value else stripped


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def scalar(value: FieldValue | None) -> str | None:
    """A field as one string; None when absent or blank."""
    if value is None:
        return None
    text = ", ".join(value) if isinstance(value, list) else value
    return text.strip() or None


def tool_list(value: FieldValue | None) -> tuple[str, ...]:
    """`allowed-tools` as a YAML list, a `[a, b]` flow list or a comma-separated string.
    Commas inside a rule's parentheses (`Bash(git commit -m "a, b")`) do not split."""
    if value is None:
        return ()
    if isinstance(value, list):
        items = value
    else:
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        items = split_rule_list(text)
    return tuple(tool for item in items if (tool := _unquote(item.strip())))


def first_line(body: str) -> str:
    """The first line with text, heading marks removed, cut to fit a menu row."""
    for line in body.split("\n"):
        text = line.strip().lstrip("#").strip()
        if text:
            if len(text) > _DESCRIPTION_LIMIT:
                return text[: _DESCRIPTION_LIMIT - 1] + "…"
            return text
    return ""


def flag(value: FieldValue | None) -> bool:
    """A yes/no field: `true`, `yes`, `on` or `1` (any case) is yes; anything else no."""
    text = scalar(value)
    return text is not None and text.lower() in TRUE_WORDS
