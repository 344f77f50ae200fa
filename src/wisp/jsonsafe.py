"""JSON across wisp's boundaries, made safe for input it does not control.

In: `loads_bounded` parses one JSON text with bounded nesting. `json.loads` recurses once
per level, so `[[[[…]]]]` a few thousand deep raises RecursionError, and a value a few
hundred deep can still overflow later recursive code (json.dumps, copies, walks). Too deep
is a `JSONTooDeep`, a ValueError like any other malformed input.

Out: `encode_utf8` turns a frame or transcript line into bytes even when it carries lone
surrogates (file names that are not UTF-8 reach Python as U+DC80..U+DCFF, and a JSON
`"\\udcff"` escape decodes to one), which strict UTF-8 refuses. They become U+FFFD.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

# Far deeper than any frame, hook answer or transcript line wisp or the SDKs write (tens
# of levels), and shallow enough that recursive code handling the value keeps its stack.
MAX_DEPTH = 200

_ONLY_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
# Opening brackets become +1 and closing ones -1 once read as signed bytes.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_LEAF = b"\x01\xff"  # an empty container, once strings and scalars are gone
_SUM_CHUNK = 1 << 14
# A pattern, not a compiled one: compiling it costs ~0.5 ms, and print mode scrubs its prompt
# before the first frame, where almost every text has no lone surrogate (see below).
_SURROGATE = "[\ud800-\udfff]"


class JSONTooDeep(ValueError):
    """JSON nested deeper than the caller allows: handled like any malformed JSON."""


def loads_bounded(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, but JSON nested deeper than `max_depth` raises JSONTooDeep."""
    if nesting_exceeds(text, max_depth):
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # only if called with little stack left; never fatal
        raise JSONTooDeep("JSON nested too deeply to parse") from None


def nesting_exceeds(text: str | bytes, max_depth: int) -> bool:
    """Whether brackets outside strings nest deeper than `max_depth`: exact for valid JSON;
    malformed JSON may read deeper than it is, which only changes its error message.
    Linear time, in whole-buffer C passes but for a short loop over what is left."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if _few_opening_brackets(raw, max_depth):
        return False  # almost every line stops here, at memchr speed
    steps = _outside_strings(raw).translate(_STEPS)
    # Each pass empties every innermost container, so takes one level off the depth. Go
    # on while that halves what is left (linear in total); a long bushy tail is summed.
    passes = 0
    while steps and passes < max_depth:
        shorter = steps.replace(_LEAF, b"")
        passes += 1
        halved = len(shorter) * 2 <= len(steps)
        steps = shorter
        if not halved:
            break
    return _rises_above(steps, max_depth - passes)


def _rises_above(steps: bytes, limit: int) -> bool:
    """Whether the running sum of `steps` (+1/-1 bytes) ever exceeds `limit`. Summed a
    chunk at a time, so `[[[[…` a megabyte long is caught in its first chunk."""
    signed = memoryview(steps).cast("b")
    level = 0
    for start in range(0, len(signed), _SUM_CHUNK):
        sums = list(accumulate(signed[start : start + _SUM_CHUNK], initial=level))
        if max(sums) > limit:
            return True
        level = sums[-1]
    return False


def _few_opening_brackets(raw: bytes, limit: int) -> bool:
    """At most `limit` `[` and `{` in `raw`, strings included; stops counting past it."""
    seen = 0
    for char in b"[{":
        at = raw.find(char)
        while at >= 0:
            seen += 1
            if seen > limit:
                return False
            at = raw.find(char, at + 1)
    return True


def _outside_strings(raw: bytes) -> bytes:
    """The brackets of `raw` that are outside its JSON strings. Once `\\\\` pairs and
    then `\\"` escapes are gone, quotes alternate open/close; with everything but quotes
    and brackets dropped, `""` (a string without brackets, or the join of two) can go
    too, which leaves few quotes to split on even in a line of many short strings."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(None, delete=_ONLY_STRUCTURE).replace(b'""', b"")
    return b"".join(structure.split(b'"')[::2])


def scrub_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD."""
    try:
        text.encode("utf-8")  # only a lone surrogate fails to encode
    except UnicodeEncodeError:
        return re.sub(_SURROGATE, "\ufffd", text)
    return text


def encode_utf8(text: str) -> bytes:
    """UTF-8 bytes of `text`; lone surrogates become U+FFFD instead of raising."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # rare: pay for the scan only then
        return scrub_surrogates(text).encode("utf-8")
