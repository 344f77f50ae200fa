"""Every frame a test sees from wisp is checked against `wisp.wire.schema`, so the fields
the SDKs depend on cannot quietly disappear from any code path the suite exercises."""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from wisp.wire.schema import schema_for


@cache
def _validator(key: int) -> Draft202012Validator:
    return Draft202012Validator(_SCHEMAS[key])


_SCHEMAS: dict[int, dict[str, Any]] = {}


def check_frame(frame: Any) -> None:
    assert isinstance(frame, dict), f"a frame must be a JSON object: {frame!r}"
    schema = schema_for(frame)
    if schema is None:
        return
    _SCHEMAS.setdefault(id(schema), schema)
    errors = sorted(_validator(id(schema)).iter_errors(frame), key=lambda e: list(e.path))
    assert not errors, f"frame violates the wire schema: {[e.message for e in errors]}\n{frame}"
