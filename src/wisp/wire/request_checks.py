"""The checks behind every control request type: declared fields (JSON types, required,
nullable, allowed values) and `RequestType`, which checks a request against them and
hands it on as its `TypedDict` (`wisp.wire.protocol`: why hand-written and this light).
"""

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, cast

from wisp.errors import InvalidRequest

_NAMES: dict[type, str] = {
    str: "a string", bool: "a boolean", int: "an integer", float: "a number",
    dict: "an object", list: "an array",
}


def _is(value: object, kind: type) -> bool:
    if kind is int:  # JSON has no separate bool/int, but Python's bool is an int
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


class Field:
    """One declared field: the JSON types it may have, whether it must be present, whether
    null is allowed (meaning "not given"), and for strings the values allowed. (Plain
    classes, not dataclasses, here: building a dataclass costs milliseconds at import.)"""

    __slots__ = ("choices", "kinds", "name", "nullable", "required")

    def __init__(self, name: str, kinds: tuple[type, ...], required: bool = False,
                 nullable: bool = False, choices: tuple[str, ...] = ()) -> None:
        self.name = name
        self.kinds = kinds
        self.required = required
        self.nullable = nullable
        self.choices = choices

    def expected(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        names = [_NAMES[k] for k in self.kinds] + (["null"] if self.nullable else [])
        return " or ".join(names)

    def problem(self, request: Mapping[str, Any]) -> str | None:
        if self.name not in request:
            return f"`{self.name}` must be {self.expected()}" if self.required else None
        value = request[self.name]
        if value is None and self.nullable:
            return None
        if not any(_is(value, k) for k in self.kinds) or (
                self.choices and value not in self.choices):
            return f"`{self.name}` must be {self.expected()}"
        return None


def field(name: str, *kinds: type, required: bool = False, nullable: bool = False,
          choices: tuple[str, ...] = ()) -> Field:
    return Field(name, kinds, required, nullable, choices)


R = TypeVar("R")


class RequestType(Generic[R]):
    """A control request subtype: its declared fields and, where the fields alone can't
    say it, one more check (`extra`, which raises a ControlError with its own phrase)."""

    __slots__ = ("extra", "fields", "subtype")

    def __init__(self, subtype: str, fields: tuple[Field, ...] = (),
                 extra: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.subtype = subtype
        self.fields = fields
        self.extra = extra

    def __repr__(self) -> str:
        return f"RequestType({self.subtype!r})"

    def problem(self, request: Mapping[str, Any]) -> str | None:
        for declared in self.fields:
            found = declared.problem(request)
            if found is not None:
                return f"Invalid {self.subtype} request: {found}"
        return None

    def parse(self, request: Mapping[str, Any]) -> R:
        """The request as its TypedDict, or InvalidRequest naming the first bad field."""
        found = self.problem(request)
        if found is not None:
            raise InvalidRequest(found)
        if self.extra is not None:
            self.extra(request)
        return cast(R, request)
