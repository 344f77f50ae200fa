"""Identities and timestamps shared by the engine, the transcript and the projections."""

from __future__ import annotations

import os
import re
import time

# Compiled on first use (re caches it), not at import: this module loads before the first
# frame, which never needs it.
_CANONICAL_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"


def new_uuid() -> str:
    """A random (version 4, RFC 4122 variant) UUID. Formatted here rather than with the
    `uuid` module, whose import pulls in `platform`: several ms before the first frame."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def is_canonical_uuid(value: str) -> bool:
    """`value` is a UUID in its hyphenated form (either case)."""
    return re.match(_CANONICAL_UUID, value) is not None


def iso_now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
