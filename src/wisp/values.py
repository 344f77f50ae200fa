"""`Value`: what `@dataclass(frozen=True)` gives a small record, without its start-up cost.

`@dataclass(frozen=True)` writes six methods as source text and compiles each one when
the class is defined: ~0.7 ms a class here, and the `-p` path defines a dozen such
records (the loop's decisions and outcomes) before its first model call. A subclass of
`Value` lists its fields in `__match_args__` (and `__slots__`) and sets them in its own
`__init__` with `object.__setattr__`; what the dataclass would have given it comes from
here, written once:

- equality field by field, only with an instance of the very same class (a subclass with
  the same fields is not equal), and the hash of the same tuple;
- `Name(field=value, …)` as repr;
- frozen: assigning or deleting an attribute raises `FrozenError` (an AttributeError, as
  the dataclass's FrozenInstanceError is);
- `__match_args__`, so `case Finish(reason)` matches positionally as with a dataclass;
- copy and pickle.
"""

from __future__ import annotations

from typing import Any, ClassVar


class FrozenError(AttributeError):
    """Raised on assignment to a `Value`: `dataclasses.FrozenInstanceError` by another name
    (that one lives in `dataclasses`, which this module exists not to need)."""


class Value:
    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({shown})"

    def __reduce__(self) -> tuple[type[Value], tuple[Any, ...]]:
        """copy and pickle rebuild through `__init__` (which takes the fields in order),
        since restoring slots by assignment would hit the frozen `__setattr__`."""
        return (self.__class__, self._fields())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}")
