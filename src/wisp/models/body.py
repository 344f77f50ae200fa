"""The JSON bytes of a Messages API request body.

Every request carries the whole history, so encoding it afresh each time makes a turn's CPU
grow with the session (2.9 ms at turn 10, 7.0 ms at turn 1,000). `BodyEncoder` encodes
each history message once: it keeps the bytes of the messages it last sent, and when the
next request starts with those same message objects (the history only grows at its end),
only the new messages are encoded and joined on. The system blocks and tool definitions,
the same every turn, are kept encoded one by one (`_piece`).

Messages are matched by value (`==`, which short-cuts on identity in C): checking 2,000
messages one by one with `is` cost 0.15 ms a turn, and a message rebuilt equal each turn
(`engine.next_request.with_context` puts the CLAUDE.md blocks in front of the first user
message as a new dict every time) would have missed the cache and re-encoded the whole
history, 20 ms a turn at 2,000 messages. Equal values encode alike unless they differ only
in key order or in `True`/`1`/`1.0`, which wisp never does to a message it already sent.
A message must not be changed in place once it has been sent (the cache still holds the
very object): replace it with a new dict instead (as `engine.session.append_user` does when
it merges into the last user message). Everything else in the body is small and encoded
each time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from wisp.jsontypes import JSON

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
# Histories kept: the session's own and those of subagents whose requests interleave with it.
_LINEAGES = 4


def encode_value(value: object) -> bytes:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False)` as UTF-8."""
    text = _ENCODER.encode(value)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Lone surrogates (from undecodable tool output) cannot be UTF-8; as \u escapes
        # they can at least be sent, and the API decides.
        return _ASCII_ENCODER.encode(value).encode()


def encode_body(body: JSON) -> bytes:
    """The body encoded from scratch (no cache)."""
    return encode_value(body)


class _Encoded:
    """The messages of one request and their JSON, comma-joined."""

    __slots__ = ("json", "messages")

    def __init__(self, messages: list[JSON], json: bytes) -> None:
        self.messages = messages
        self.json = json


# Pieces kept encoded (system blocks, tool definitions); past this many, start over.
_MAX_PIECES = 1024


class BodyEncoder:
    """Encodes request bodies, each history message only once (see the module doc)."""

    __slots__ = ("_pieces", "_recent")

    def __init__(self) -> None:
        self._recent: list[_Encoded] = []  # most recently used first
        # key → (the object the key names, kept alive so its id stays its own; its JSON)
        self._pieces: dict[tuple[object, ...], tuple[object, bytes]] = {}

    def encode(self, body: JSON) -> bytes:
        # One join at the end: the history's bytes (150 KB at 2,000 messages) are copied
        # once here, not once per concatenation.
        parts: list[bytes] = [b"{"]
        for key, value in body.items():
            parts += (b"," if len(parts) > 1 else b"", _key(key))
            if key == "messages":
                parts += (b"[", self.messages_joined(value), b"]")
            else:
                parts.append(self._value(key, value))
        parts.append(b"}")
        return b"".join(parts)

    def _value(self, key: str, value: Any) -> bytes:
        if key in ("tools", "system") and isinstance(value, list):
            return b"[" + b",".join(map(self._piece, value)) + b"]"
        return encode_value(value)

    def _piece(self, item: Any) -> bytes:
        """One system block or tool definition, encoded once. A tool definition is a fresh
        dict each turn, so it is known by its name, description and schema object."""
        if not isinstance(item, dict):
            return encode_value(item)
        if item.keys() == {"name", "description", "input_schema"}:
            anchor: object = item["input_schema"]
            key: tuple[object, ...] = (item["name"], item["description"], id(anchor))
        else:
            anchor, key = item, (id(item),)
        hit = self._pieces.get(key)
        if hit is not None and hit[0] is anchor:
            return hit[1]
        if len(self._pieces) >= _MAX_PIECES:
            self._pieces.clear()
        encoded = encode_value(item)
        self._pieces[key] = (anchor, encoded)
        return encoded

    def messages_joined(self, messages: Sequence[JSON]) -> bytes:
        """The JSON of `messages`, comma-joined (the array without its brackets)."""
        base = self._longest_prefix(messages)
        done = len(base.messages) if base is not None else 0
        fresh = [encode_value(m) for m in messages[done:]]
        if base is not None and base.json:
            fresh.insert(0, base.json)
        joined = b",".join(fresh)
        entry = _Encoded(list(messages), joined)
        recent = [e for e in self._recent if e is not base]
        self._recent = [entry, *recent[: _LINEAGES - 1]]
        return joined

    def _longest_prefix(self, messages: Sequence[JSON]) -> _Encoded | None:
        best: _Encoded | None = None
        for entry in self._recent:
            n = len(entry.messages)
            if (n <= len(messages) and (best is None or n > len(best.messages))
                    and entry.messages == messages[:n]):
                best = entry
        return best


_KEYS: dict[str, bytes] = {}  # a body's few key names, encoded once


def _key(key: str) -> bytes:
    encoded = _KEYS.get(key)
    if encoded is None:
        encoded = _KEYS[key] = encode_value(key) + b":"
    return encoded
