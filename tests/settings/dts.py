"""The reference's settings keys, read from the `Settings` interface of the TypeScript
Agent SDK's `sdk.d.ts` (generated there from Claude Code's settings schema), written as
the table `wisp.settings.known_keys` holds:

    python -m tests.settings.dts > src/wisp/settings/known_keys.py   (scripts/settings-keys)

A table spec is None (any value: a leaf, or an object open to any key), a dict of the
keys an object knows (`"*"`: a record, any key, each value by that spec), or a list of
one spec (a list whose items follow it). Only the TypeScript subset the interface uses
is parsed: object literals, index signatures, unions, arrays, tuples and literals.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SDK_TYPES = (Path(__file__).resolve().parents[1] / "sdk" / "ts" / "node_modules" / "@anthropic-ai"
             / "claude-agent-sdk" / "sdk.d.ts")
_TOKEN = re.compile(r"\s+|/\*.*?\*/|//[^\n]*|('(?:[^'\\]|\\.)*')|(\"(?:[^\"\\]|\\.)*\")"
                    r"|([A-Za-z_$][\w$-]*)|(-?\d+(?:\.\d+)?)|(\.\.\.|[{}()\[\]|;:?,&<>=])",
                    re.S)


@dataclass
class Obj:
    named: dict[str, Any] = field(default_factory=dict)
    index: Any = None  # the value type of `[k: string]: …`, if any


@dataclass
class Arr:
    item: Any


@dataclass
class Union:
    options: list[Any]


LEAF = "leaf"  # a scalar, a literal, `unknown`: nothing to check inside
OPEN = "open"  # an object any key may be added to


def tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read {text[pos:pos + 40]!r}")
        pos = match.end()
        word = next((g for g in match.groups() if g is not None), None)
        if word is not None:
            out.append(word)
    return out


class Parser:
    def __init__(self, words: list[str]) -> None:
        self.words, self.at = words, 0

    def peek(self) -> str:
        return self.words[self.at]

    def take(self, expected: str | None = None) -> str:
        word = self.words[self.at]
        if expected is not None and word != expected:
            raise ValueError(f"expected {expected!r}, got {word!r} at token {self.at}")
        self.at += 1
        return word

    def type(self) -> Any:
        if self.peek() == "|":
            self.take()
        options = [self.postfix()]
        while self.peek() == "|":
            self.take()
            options.append(self.postfix())
        return options[0] if len(options) == 1 else Union(options)

    def postfix(self) -> Any:
        node = self.primary()
        while self.peek() == "[" and self.words[self.at + 1] == "]":
            self.take("[")
            self.take("]")
            node = Arr(node)
        return node

    def primary(self) -> Any:
        word = self.take()
        if word == "{":
            return self.members()
        if word == "(":
            inner = self.type()
            self.take(")")
            return inner
        if word == "[":  # a tuple: its items' union is what a list of them holds
            items = []
            while self.peek() != "]":
                if self.peek() == "...":
                    self.take()
                items.append(self.type())
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return Arr(Union(items) if len(items) > 1 else items[0])
        return LEAF  # string, number, boolean, unknown, a literal

    def members(self) -> Obj:
        obj = Obj()
        while self.peek() != "}":
            if self.peek() == "[":
                for word in ("[", "k", ":", "string", "]", ":"):
                    self.take(word)
                obj.index = self.type()
            else:
                key = self.take().strip("'\"")
                if self.peek() == "?":
                    self.take()
                self.take(":")
                obj.named[key] = self.type()
            if self.peek() == ";":
                self.take()
        self.take("}")
        return obj


def spec(node: Any) -> Any:
    """The table spec of a parsed type: None for LEAF, OPEN kept for unions to see."""
    if isinstance(node, Arr):
        item = spec(node.item)
        return None if item in (None, OPEN) else [item]
    if isinstance(node, Union):
        return _merge([spec(option) for option in node.options])
    if isinstance(node, Obj):
        return _object(node)
    return None


def _object(node: Obj) -> Any:
    if not node.named:
        value = spec(node.index) if node.index is not None else None
        return OPEN if value in (None, OPEN) else {"*": value}
    if node.index is not None and len(node.named) <= 1:
        return OPEN  # `{type: string; [k]: unknown}`: a free-form variant
    return {key: _close(spec(value)) for key, value in node.named.items()}


def _close(value: Any) -> Any:
    return None if value == OPEN else value


def _merge(specs: list[Any]) -> Any:
    """A union: scalars add nothing; any open variant opens it; objects pool their keys."""
    shaped = [s for s in specs if s is not None]
    if not shaped:
        return None
    if OPEN in shaped:
        return OPEN
    if all(isinstance(s, dict) for s in shaped):
        merged: dict[str, Any] = {}
        for one in shaped:
            for key, value in one.items():
                merged[key] = value if key not in merged else _close(
                    _merge([merged[key], value]))
        return merged
    if all(isinstance(s, list) for s in shaped):
        return [_close(_merge([s[0] for s in shaped]))]
    return OPEN


def settings_interface(text: str) -> str:
    start = text.index("export declare interface Settings {")
    depth, end = 0, start
    for end in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[text.index("{", start):end + 1]


def cap(table: Any, levels: int) -> Any:
    """Keys checked `levels` objects deep at most (records and lists cost no level): a
    typo deeper in (a marketplace plugin's source) is left for the reference to judge,
    and the table stays small."""
    if isinstance(table, list):
        item = cap(table[0], levels)
        return None if item is None else [item]
    if not isinstance(table, dict):
        return table
    if "*" in table:
        value = cap(table["*"], levels)
        return None if value is None else {"*": value}
    if levels == 0:
        return None
    return {key: cap(value, levels - 1) for key, value in table.items()}


def reference_keys(dts: str, levels: int = 3) -> dict[str, Any]:
    parser = Parser(tokens(settings_interface(dts)))
    parser.take("{")
    table = cap(_object(parser.members()), levels)
    assert isinstance(table, dict)
    return table


def render(table: dict[str, Any], source: str) -> str:
    import pprint

    body = pprint.pformat(table, width=96, sort_dicts=False)
    return f'''"""Every key the reference's settings schema knows, for reporting unknown ones.

Generated by scripts/settings-keys from the `Settings` interface of
{source}; do not edit by hand (tests/settings/test_known_keys.py
checks it matches). A spec is None (any value), a dict of known keys ("*": any key,
each value by that spec), or a list of one spec (a list whose items follow it).
"""

from typing import Any

REFERENCE: dict[str, Any] = {body}
'''


if __name__ == "__main__":
    package = SDK_TYPES.parent / "package.json"
    version = re.search(r'"version":\s*"([^"]+)"', package.read_text()).group(1)  # type: ignore[union-attr]
    sys.stdout.write(render(reference_keys(SDK_TYPES.read_text(encoding="utf-8")),
                            f"@anthropic-ai/claude-agent-sdk {version}"))
