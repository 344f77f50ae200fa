"""Operands bash evaluates: arithmetic and the names of variables.

bash evaluates arithmetic recursively: a variable's value is itself an expression, and an
array subscript in it expands `$(…)` again, even text that came from single quotes
(`let 'a[$(rm x)]'`, `x='a[$(rm x)]'; echo $((x))`). So an arithmetic operand is harmless
only when every token of it has a known meaning: numbers, operators, and variables whose
values are themselves harmless arithmetic. A quote, a backslash, a command substitution or
a positional parameter leaves it unknown.

An operand that names a variable (`read NAME`, `printf -v NAME`, `test -v NAME`, `declare`)
must be a plain identifier: `a[…]` there is a subscript bash evaluates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name, or an element with a literal index (`a[3]`, `a[@]`).
_NAME_OR_ELEMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[(?:[0-9]+|[@*])\])?")
_TOKEN = re.compile(
    r"\s+"
    r"|0[xX][0-9A-Fa-f]+|[0-9]+#[0-9A-Za-z@_]+|[0-9]+"
    r"|\$\{#?(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|\$(?P<dollar>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\$[#?$!]"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\*\*=?|<<=?|>>=?|&&|\|\||\+\+|--|[-+*/%<>=!&|^~?:,]=?|[()\[\]]")
# Set by bash to numbers whatever the line does.
NUMERIC_SPECIALS = frozenset({
    "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCHSECONDS", "PPID", "UID", "EUID",
    "BASHPID", "SHLVL", "OPTIND", "HISTCMD"})
# How deep a variable's value is followed as an expression before giving up.
_MAX_DEPTH = 4

# Answers whether a variable's value is harmless arithmetic (given the depth so far).
NameCheck = Callable[[str, int], bool]


def is_plain(text: str, name_ok: NameCheck, depth: int = 0) -> bool:
    """`text` evaluated as bash arithmetic runs nothing and reads no file."""
    if depth > _MAX_DEPTH:
        return False
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            return False
        name = match["braced"] or match["dollar"] or match["name"]
        if name is not None and name not in NUMERIC_SPECIALS and not name_ok(name, depth + 1):
            return False
        at = match.end()
    return True


def is_identifier(text: str | None) -> bool:
    return text is not None and IDENTIFIER.fullmatch(text) is not None


def is_name_or_element(text: str | None) -> bool:
    """A plain name, or an array element with a literal index."""
    return text is not None and _NAME_OR_ELEMENT.fullmatch(text) is not None


# Variables bash runs as code when set: PS4 in every `set -x` trace line, PROMPT_COMMAND
# before each prompt, BASH_ENV and ENV when a shell starts.
CODE_VARIABLES = frozenset({"PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "PS0", "PS1", "PS2",
                            "PS3"})


def declared_word_reason(keyword: str, text: str | None) -> str | None:
    """Why a word given to `declare`/`local`/`export`/… (not parsed as an assignment, so
    quoted or expanded) is not harmless, or None when it is."""
    if text is None:
        return f"{keyword} is given a word that is not literal, which bash may evaluate"
    if text.startswith(("-", "+")):
        # -i makes later assignments arithmetic; -n makes a name a reference bash resolves.
        evaluates = keyword != "export" and ("i" in text or "n" in text)
        return f"{keyword} {text} makes bash evaluate what it is given" if evaluates else None
    name, eq, value = text.partition("=")
    if not is_name_or_element(name):
        return f"{keyword} names a variable with {name!r}: bash evaluates its subscript"
    if name in CODE_VARIABLES:
        return f"{keyword} sets {name}, which bash runs as code"
    compound = eq and value.startswith("(")
    return f"{keyword} is given a quoted array assignment, whose subscripts bash evaluates" \
        if compound else None
