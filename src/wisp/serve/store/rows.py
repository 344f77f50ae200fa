"""What both stores (`sqlite`, `postgres`) do the same way with rows: JSON bodies, page
cursors, limits and orders, and event times as sortable text."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve.store.base import UNTAKEN


def loads(text: str) -> JSON:
    doc: JSON = json.loads(text)
    return doc

def time_key(value: str) -> str:
    """An ISO-8601 time as fixed-width UTC text, so SQL's text order is time order whatever
    offset or precision the writer used. Naive times are taken as UTC."""
    t = datetime.fromisoformat(value)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"

def stored_time(value: Any) -> str | None:
    # The service writes valid times; anything else is kept as is rather than lose the event.
    if value is None:
        return None
    try:
        return time_key(str(value))
    except ValueError:
        return str(value)

def descending(order: str) -> bool:
    if order not in ("asc", "desc"):
        raise ValueError(f"order must be 'asc' or 'desc', not {order!r}")
    return order == "desc"

def checked(limit: int) -> int:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    return limit

def cursor(tag: str, position: int) -> str:
    return base64.urlsafe_b64encode(f"{tag}{position}".encode()).decode().rstrip("=")

def position(tag: str, page: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(page + "=" * (-len(page) % 4)).decode()
        if raw.startswith(tag) and raw[len(tag):].isdigit():
            return int(raw[len(tag):])
    except ValueError:  # bad base64 (binascii.Error) or bytes that aren't UTF-8
        pass
    raise ValueError(f"invalid page cursor: {page!r}")

def is_queued(entry: JSON) -> bool:
    """A client event not yet consumed: what makes a session need a worker."""
    return ((entry.get("processed_at") is None or bool(entry.get(UNTAKEN)))
            and str(entry["type"]).startswith("user."))
