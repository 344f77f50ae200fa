"""awk programs tokenised (strings, regexes and comments skipped as awk skips them) to find
what they do besides filtering: run commands (`system`, `print | cmd`, `cmd | getline`),
write files (`print > f`), read files the command line does not name (`getline < f`,
`ARGV`/`ARGC`), read the environment (`ENVIRON`) or call a function by name (gawk's `@f()`,
`@load`, `@include`).

A program is harmless only when its tokens say so; one that cannot be tokenised is not.
"""

from __future__ import annotations

import re

_DANGEROUS_NAMES = frozenset({"system", "ENVIRON", "ARGV", "ARGC", "PROCINFO"})
_TOKEN = re.compile(
    r"[ \t]+|\\\r?\n|#[^\n]*|\n"
    r"|\"(?:\\.|[^\"\\\n])*\""
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|(?P<op>\|&|\|\||&&|>>|>=|<=|==|!=|\+\+|--|[-+*/%^!]=|[|<>])"
    r"|(?P<punct>[(){}\[\];,?:~$=+\-*%^!&@])"
    r"|(?P<slash>/)")
_REGEX = re.compile(r"/(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])*/")
# After these a `/` divides; anywhere else it starts a regex.
_OPERAND_END = frozenset({")", "]", "$", "++", "--"})


def awk_program_is_safe(program: str) -> bool:
    tokens = _tokens(program)
    if tokens is None:
        return False
    depth = 0
    in_print = False
    for kind, text in tokens:
        if kind == "name":
            if not _name_is_safe(text, tokens):
                return False
            in_print = in_print or text in ("print", "printf")
        elif text in ("|", "|&", "@"):
            return False
        elif text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif text in (";", "{", "}", "\n"):
            in_print, depth = False, 0 if text != "\n" else depth
        elif text in (">", ">>") and in_print and depth <= 0:
            return False  # output redirection, not a comparison
    return True


def _name_is_safe(name: str, tokens: list[tuple[str, str]]) -> bool:
    if name in _DANGEROUS_NAMES:
        return False
    # `getline < file` reads a file; `<` may be a comparison instead: the safe mistake.
    return name != "getline" or all(t != "<" for _, t in tokens)


def _tokens(program: str) -> list[tuple[str, str]] | None:
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(program):
        match = _TOKEN.match(program, at)
        if match is None:
            return None
        if match["slash"] is not None and not _divides(tokens):
            regex = _REGEX.match(program, at)
            if regex is None:
                return None
            tokens.append(("regex", regex.group()))
            at = regex.end()
            continue
        text = match.group()
        if text.strip() or text == "\n":
            kind = "name" if match["name"] else "op"
            tokens.append((kind, text if not text.startswith("#") else "\n"))
        at = match.end()
    return tokens


def _divides(tokens: list[tuple[str, str]]) -> bool:
    if not tokens:
        return False
    kind, text = tokens[-1]
    if kind == "name":
        return text not in ("print", "printf", "return", "in", "getline")
    return text in _OPERAND_END or text[0].isdigit() or text[0] in ".\""
