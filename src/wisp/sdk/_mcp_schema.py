"""The JSON Schema of an in-process tool's `input_schema` (`wisp.sdk.mcp`): a JSON Schema
dict passes as is; a dict of argument names to Python types, or a TypedDict class, is
described as the official SDK describes it.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from wisp.jsontypes import JSON

_QUALIFIERS = frozenset({"Required", "NotRequired", "ReadOnly"})
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_schema(py_type: Any) -> JSON:  # noqa: PLR0911 (one arm per kind of type)
    """The JSON Schema of one Python annotation; anything unrecognised is a string."""
    origin = typing.get_origin(py_type)
    if getattr(origin, "_name", None) in _QUALIFIERS:
        return _type_schema(typing.get_args(py_type)[0])
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(py_type)
        schema = _type_schema(base)
        text = next((m for m in metadata if isinstance(m, str)), None)
        if text is not None:
            schema["description"] = text
        return schema
    if py_type in _SCALARS and isinstance(py_type, type):
        return {"type": _SCALARS[py_type]}
    if origin is typing.Union or isinstance(py_type, types.UnionType):
        options = [a for a in typing.get_args(py_type) if a is not type(None)]
        if len(options) == 1:
            return _type_schema(options[0])
        return {"anyOf": [_type_schema(a) for a in options]}
    if origin is list or py_type is list:
        items = typing.get_args(py_type)
        return {"type": "array", "items": _type_schema(items[0])} if items else {"type": "array"}
    if origin is dict or py_type is dict:
        return {"type": "object"}
    if typing.is_typeddict(py_type):
        return _typeddict_schema(py_type)
    return {"type": "string"}


def _typeddict_schema(cls: Any) -> JSON:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {field: _type_schema(hint) for field, hint in hints.items()}
    schema: JSON = {"type": "object", "properties": properties}
    required = getattr(cls, "__required_keys__", set(properties))
    if required:
        schema["required"] = sorted(required)
    return schema


def input_json_schema(input_schema: Any) -> JSON:
    """The `inputSchema` sent for a tool's declared `input_schema`."""
    if isinstance(input_schema, dict):
        if isinstance(input_schema.get("type"), str) and "properties" in input_schema:
            return input_schema  # already JSON Schema
        properties = {key: _type_schema(value) for key, value in input_schema.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if typing.is_typeddict(input_schema):
        return _typeddict_schema(input_schema)
    return {"type": "object", "properties": {}}


__all__ = ["input_json_schema"]
