"""Structured output: `--json-schema` (or initialize's `jsonSchema`) becomes the input schema
of a `StructuredOutput` tool, and a run ends when the model calls it with a valid object.

The tool is not a `wisp.tools.Tool`: it runs nothing, and the duplex session rebuilds
`config.tools` from its own tool set at will. It lives in `config.extra_tool_definitions`
and the loop routes its calls here.

`jsonschema` is imported only when a schema is used: it costs tens of milliseconds of
startup that a plain `-p` run must not pay.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from wisp.engine.context import EngineConfig
from wisp.engine.events import ToolResultReady
from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON
from wisp.stamps import new_uuid
from wisp.values import Record

TOOL_NAME = "StructuredOutput"
DEFAULT_MAX_ATTEMPTS = 5
WRAP_KEY = "value"
DESCRIPTION = (
    "Deliver the final answer of this request as structured data. Call this tool exactly "
    "once, after any other work is done, with an input that matches its schema: the input "
    "itself is the answer. If the call is rejected, fix the listed problems and call again."
)
NUDGE = (
    "This request must end with a call to the StructuredOutput tool, whose input is your "
    "final answer in the required format. A reply in prose is not accepted: call the tool now."
)
ACCEPTED = "Structured output received."


def _validator_class(schema: JSON) -> Any:
    from jsonschema.validators import Draft202012Validator, validator_for

    return validator_for(schema, default=Draft202012Validator)


def schema_problem(schema: JSON) -> str | None:
    """Why `schema` is not a usable JSON Schema, or None."""
    from jsonschema.exceptions import SchemaError

    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        where = _where(exc.absolute_path)
        return f"{exc.message} (at {where})" if exc.absolute_path else exc.message
    return None


def _wrapped(schema: JSON) -> bool:
    # Tool inputs must be objects; any other schema is carried under one property.
    return schema.get("type") != "object"


def tool_definition(schema: JSON) -> JSON:
    input_schema = schema
    if _wrapped(schema):
        input_schema = {"type": "object", "properties": {WRAP_KEY: schema}, "required": [WRAP_KEY]}
    return {"name": TOOL_NAME, "description": DESCRIPTION, "input_schema": input_schema}


def enable_structured_output(config: EngineConfig, schema: JSON) -> None:
    """Adds (or replaces) the StructuredOutput tool; a later run ends on a valid call."""
    config.json_schema = schema
    others = [d for d in config.extra_tool_definitions if d.get("name") != TOOL_NAME]
    config.extra_tool_definitions = [*others, tool_definition(schema)]


def max_attempts(env: Mapping[str, str]) -> int:
    raw = env.get("MAX_STRUCTURED_OUTPUT_RETRIES")
    try:
        return max(1, int(raw)) if raw else DEFAULT_MAX_ATTEMPTS
    except ValueError:
        return DEFAULT_MAX_ATTEMPTS


def _where(path: Any) -> str:
    out = "root"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _parse_json_text(text: str) -> Any:
    """The value a JSON text holds, looking through one extra layer of string encoding."""
    try:  # bounded: model text nested thousands deep must not raise RecursionError
        value = loads_bounded(text)
        return loads_bounded(value) if isinstance(value, str) else value
    except ValueError:
        return None


def _candidates(block: JSON, raw: str | None) -> Iterator[Any]:
    """The input as given first, then readings of a common slip: the object sent as a JSON
    string, either as the whole input (`raw`, the text of an input that was not an object)
    or as the one property's value."""
    given = block.get("input")
    if raw is None:  # else `input` is a placeholder, not what was sent
        yield given if isinstance(given, dict) else {}
    else:
        parsed = _parse_json_text(raw)
        if parsed is not None:
            yield parsed
    if isinstance(given, dict) and len(given) == 1:
        ((key, value),) = given.items()
        if isinstance(value, str) and (parsed := _parse_json_text(value)) is not None:
            yield {key: parsed}
            yield parsed


class StructuredRun(Record):
    """Per-run state: attempts so far, the nudge, the accepted value."""

    schema: JSON
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    failures: int = 0
    nudged: bool = False
    accepted: bool = False
    value: Any = None
    _validator: Any = None

    @classmethod
    def for_config(cls, config: EngineConfig) -> StructuredRun | None:
        if not isinstance(config.json_schema, dict):
            return None
        return cls(config.json_schema, max_attempts(config.env))

    @property
    def exhausted(self) -> bool:
        return not self.accepted and self.failures >= self.max_attempts

    def handles(self, block: JSON) -> bool:
        return block.get("name") == TOOL_NAME

    def nudge(self) -> str | None:
        """The one reminder sent when the model answers without calling the tool."""
        if self.accepted or self.nudged:
            return None
        self.nudged = True
        return NUDGE

    def result_text(self) -> str:
        return json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))

    def check(self, block: JSON, raw: str | None = None) -> tuple[JSON, ToolResultReady]:
        """(tool_result block, the event that shows it) for one StructuredOutput call. `raw` is the
        input's text when it was not a JSON object."""
        tool_use_id = str(block.get("id"))
        problems = self._accept(block, raw)
        if problems:
            self.failures += 1
            content = "The output does not match the required schema:\n" + "\n".join(
                f"- {p}" for p in problems
            )
            data = f"Error: {content}"
        else:
            content = data = ACCEPTED
        result = {
            "tool_use_id": tool_use_id,
            "type": "tool_result",
            "content": content,
            "is_error": bool(problems),
        }
        meta = {
            "id": tool_use_id,
            "permission_decision": {"decision": "accept", "source": "config"},
        }
        return result, ToolResultReady(result, data, meta, new_uuid())

    def _accept(self, block: JSON, raw: str | None) -> list[str]:
        """Validates each reading of the input; the first valid one is the answer. The
        problems reported are those of the input as given."""
        first: list[str] | None = None
        for candidate in _candidates(block, raw):
            problems = self._problems(candidate)
            if not problems:
                if not self.accepted:  # a second valid call in the same message changes nothing
                    self.accepted = True
                    self.value = candidate[WRAP_KEY] if _wrapped(self.schema) else candidate
                return []
            first = problems if first is None else first
        return first or ["root: the input must be a JSON object"]

    def _problems(self, candidate: Any) -> list[str]:
        if not isinstance(candidate, dict):
            return ["root: the input must be a JSON object"]
        if self._validator is None:
            definition = tool_definition(self.schema)["input_schema"]
            self._validator = _validator_class(definition)(definition)
        try:
            errors = list(self._validator.iter_errors(candidate))
        except Exception as exc:  # e.g. a $ref that cannot be resolved offline
            return [f"root: the schema could not be applied: {exc}"]
        return [f"{_where(e.absolute_path)}: {e.message}" for e in errors]
