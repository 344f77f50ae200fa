"""Tool parameter schemas in the JSON-Schema dialect a server accepts (quirk 40).

- `passthrough`: as the tool declares it.
- `portable` (the default): local `$ref`s inlined (a recursive one becomes `{}`),
  `$defs`/`definitions`, `$schema`, `$id` and `$comment` dropped, and an object at the root.
- `gemini`: portable, and type arrays become one type plus `nullable`, exclusive bounds
  inclusive ones, and keywords Gemini's endpoint rejects dropped.
- `openai_strict`: portable, and every object closed (`additionalProperties: false`) with
  all its properties required, the optional ones made nullable.
"""

from __future__ import annotations

import copy
from typing import Any

from wisp.jsontypes import JSON

_DROPPED = ("$schema", "$id", "$comment", "$defs", "definitions")
_GEMINI_DROPPED = ("additionalProperties", "patternProperties", "const", "examples",
                   "default", "title", "unevaluatedProperties", "dependentRequired")
_MAX_DEPTH = 32


def tool_parameters(schema: JSON, mode: str) -> JSON:
    if mode == "passthrough":
        return schema
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    result = _portable(copy.deepcopy(schema), defs, ())
    if not isinstance(result, dict):
        result = {}
    if result.get("type") != "object":
        result = {"type": "object", "properties": result.get("properties") or {}}
    result.setdefault("properties", {})
    if mode == "gemini":
        return _gemini(result)
    if mode == "openai_strict":
        return _strict(result)
    return result


def _portable(node: Any, defs: JSON, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_portable(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in defs or len(seen) > _MAX_DEPTH:
            return {}  # recursion (or a dangling ref): any value
        target = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _portable(copy.deepcopy(target), defs, (*seen, name))
    return {key: _portable(value, defs, seen) for key, value in node.items()
            if key not in _DROPPED}


def _walk(node: Any, fix: Any) -> Any:
    if isinstance(node, list):
        return [_walk(item, fix) for item in node]
    if not isinstance(node, dict):
        return node
    return fix({key: _walk(value, fix) for key, value in node.items()})


def _gemini(schema: JSON) -> JSON:
    def fix(node: JSON) -> JSON:
        kind = node.get("type")
        if isinstance(kind, list):
            types = [t for t in kind if t != "null"]
            node["type"] = types[0] if types else "string"
            if "null" in kind:
                node["nullable"] = True
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(node.get(bound), int | float):
                node[plain] = node.pop(bound)
        for key in _GEMINI_DROPPED:
            node.pop(key, None)
        return node

    result: JSON = _walk(schema, fix)
    return result


def _strict(schema: JSON) -> JSON:
    def fix(node: JSON) -> JSON:
        if node.get("type") != "object" or not isinstance(node.get("properties"), dict):
            return node
        required = set(node.get("required") or [])
        for name, prop in node["properties"].items():
            if name not in required and isinstance(prop, dict):
                node["properties"][name] = _nullable(prop)
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
        return node

    result: JSON = _walk(schema, fix)
    return result


def _nullable(prop: JSON) -> JSON:
    kind = prop.get("type")
    if isinstance(kind, str):
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list) and "null" not in kind:
        return {**prop, "type": [*kind, "null"]}
    if kind is None:
        return {"anyOf": [prop, {"type": "null"}]}
    return prop
