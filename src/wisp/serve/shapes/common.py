"""What every shape module reads with: `ShapeError`, the primitive readers (`read_object`,
`read_str`, `optional_field`, `read_variant`, ...), metadata bags, ids and timestamps."""

from __future__ import annotations

import math
import secrets
import string
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, cast

from wisp.jsontypes import JSON
from wisp.stamps import iso_now

Parser = Callable[[JSON, str], JSON]

_MAX_METADATA = 16
_ID_ALPHABET = string.ascii_letters + string.digits


# Errors and primitive readers ---------------------------------------------------------------

class ShapeError(ValueError):
    """A request field of the wrong type or value; `path` names it (`tools[0].type`)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path or "body"
        self.message = message
        super().__init__(f"{self.path}: {message}")


def child_path(path: str, key: str) -> str:
    """The path of `key` inside `path`, as a ShapeError names it (`tools[0].type`)."""
    return f"{path}.{key}" if path else key


def read_object(value: object, path: str) -> JSON:
    if not isinstance(value, dict):
        raise ShapeError(path, "expected an object")
    return cast(JSON, value)


def read_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ShapeError(path, "expected an array")
    return value


def read_str(value: object, path: str, *, empty: bool = True, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise ShapeError(path, "expected a string")
    if not empty and not value:
        raise ShapeError(path, "must not be empty")
    if limit is not None and len(value) > limit:
        raise ShapeError(path, f"longer than {limit} characters")
    return value


def read_optional_str(value: object, path: str) -> str | None:
    return None if value is None else read_str(value, path)


def read_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ShapeError(path, "expected a boolean")
    return value


def read_int(value: object, path: str, lo: int | None = None, hi: int | None = None) -> int:
    # bool is an int to Python, never to a JSON schema
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(path, "expected an integer")
    if lo is not None and value < lo:
        raise ShapeError(path, f"expected an integer of at least {lo}")
    if hi is not None and value > hi:
        raise ShapeError(path, f"expected an integer of at most {hi}")
    return value


def read_choice(value: object, path: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ShapeError(path, "expected one of " + ", ".join(f'"{o}"' for o in options))
    return value


def read_strs(value: object, path: str) -> list[str]:
    return [read_str(item, f"{path}[{i}]") for i, item in enumerate(read_list(value, path))]


def required_field(obj: JSON, key: str, path: str) -> Any:
    """`obj[key]`, or a ShapeError when it is absent or null."""
    if obj.get(key) is None:
        raise ShapeError(child_path(path, key), "required")
    return obj[key]


def optional_field(obj: JSON, key: str, path: str, read: Callable[[Any, str], Any],
                   default: Any = None) -> Any:
    """`read(obj[key])`, or `default` when the key is absent or null."""
    value = obj.get(key)
    return default if value is None else read(value, child_path(path, key))


def read_variant(value: object, path: str, kinds: Mapping[str, Parser]) -> JSON:
    """One member of a union discriminated by `type`, read by the parser of its kind."""
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), tuple(kinds))
    return kinds[kind](obj, path)


def read_items(value: object, path: str, read: Callable[[Any, str], JSON]) -> list[JSON]:
    return [read(item, f"{path}[{i}]") for i, item in enumerate(read_list(value, path))]


def check_unique(names: Sequence[str], path: str, what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise ShapeError(f"{path}[{i}]", f'{what} "{name}" appears twice')
        seen.add(name)


def read_metadata(value: object, path: str, *, patch: bool = False) -> dict[str, str | None]:
    """A metadata bag; in a patch a null value deletes its key."""
    out: dict[str, str | None] = {}
    for key, item in read_object(value, path).items():
        where = child_path(path, key)
        if len(key) > 64:
            raise ShapeError(where, "key longer than 64 characters")
        out[key] = None if patch and item is None else read_str(item, where, limit=512)
    if not patch and len(out) > _MAX_METADATA:
        raise ShapeError(path, f"more than {_MAX_METADATA} pairs")
    return out


def patched_metadata(current: Mapping[str, str], patch: Mapping[str, str | None],
                     *, empty_deletes: bool = False) -> dict[str, str]:
    merged = dict(current)
    for key, value in patch.items():
        if value is None or (empty_deletes and value == ""):
            merged.pop(key, None)
        else:
            merged[key] = value
    if len(merged) > _MAX_METADATA:
        raise ShapeError("metadata", f"more than {_MAX_METADATA} pairs")
    return merged


# Ids and time -------------------------------------------------------------------------------

def new_id(prefix: str) -> str:
    """`prefix_` and 24 random base62 characters (`sevt_…`, `sesn_…`, `agent_…`, `env_…`)."""
    return prefix + "_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(24))


def timestamp() -> str:
    """Now, as every document and event carries it: ISO 8601, UTC, milliseconds, `Z`."""
    return iso_now()


def _format_ms(moment: datetime, ms: int) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms:03d}Z"


def instant(value: object, path: str, *, round_up: bool = False) -> str:
    """A query timestamp (`2026-01-02T03:04:05+00:00`: the SDK sends `datetime`s with an
    offset, not `Z`) in the stored form, so the store can compare strings. Stored stamps
    have milliseconds: `round_up` is for `gte`/`lt`, whose bound must round up to keep the
    comparison exact on that grid."""
    text = read_str(value, path)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ShapeError(path, "expected an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    micro = moment.microsecond
    ms = math.ceil(micro / 1000) if round_up else micro // 1000
    base = moment.replace(microsecond=0) + timedelta(seconds=ms // 1000)
    return _format_ms(base, ms % 1000)


# Documents ----------------------------------------------------------------------------------

Doc = TypeVar("Doc", bound=Mapping[str, Any])


def archived(doc: Doc, *, now: str | None = None) -> Doc:
    """A document archived now (`POST .../archive`): of the same type, as every document
    that can be archived has `archived_at` and `updated_at`."""
    now = now or timestamp()
    return cast(Doc, {**doc, "archived_at": now, "updated_at": now})


def archived_once(doc: Doc) -> Doc | None:
    """`archived(doc)`, or None when it is archived already (archiving is done once, its
    time kept): a `Store.modify` change."""
    return None if doc.get("archived_at") else archived(doc)
