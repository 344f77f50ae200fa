"""`Value`: what `@dataclass(frozen=True)` gives a small record, without its start-up cost.

`@dataclass(frozen=True)` writes six methods as source text and compiles each one when
the class is defined: ~0.7 ms a class here, and the `-p` path defines a dozen such
records (the loop's decisions and outcomes, permission verdicts, hook matchers…) before
its first model call. A `Value` lists its fields as a dataclass does, as annotations with
optional defaults, and gets the same behaviour from code written once, here:

- `__init__` taking the fields in order, base classes' first (generated on the first
  instance, as `wisp.engine.events` does: most records are never built in a run);
- equality field by field, only with an instance of the very same class (a subclass with
  the same fields is not equal), and the hash of the same tuple;
- `Name(field=value, …)` as repr, in field order;
- frozen: assigning or deleting an attribute raises `FrozenError` (an AttributeError, as
  the dataclass's FrozenInstanceError is);
- `__match_args__`, so `case Finish(reason)` matches positionally as with a dataclass;
- copy and pickle.

Mutable defaults need a `field(default_factory=…)`, which `Value` does not offer: records
with such fields stay dataclasses. `dataclasses.replace` and `fields` do not apply.
"""

from __future__ import annotations

from typing import Any, ClassVar, dataclass_transform

_set = object.__setattr__


class FrozenError(AttributeError):
    """Raised on assignment to a `Value`: `dataclasses.FrozenInstanceError` by another name
    (that one lives in `dataclasses`, which this module exists not to need)."""


@dataclass_transform(eq_default=True, frozen_default=True)
class ValueType(type):
    """Makes a `Value` class from its annotations (strings, as `from __future__ import
    annotations` leaves them; `ClassVar` ones are not fields): its fields after its bases'
    in `__match_args__`, its own in `__slots__`, and class-level defaults kept aside for
    `__init__` (slots cannot coexist with a class attribute of the same name)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> ValueType:
        notes: dict[str, str] = namespace.get("__annotations__", {})
        own = [f for f, note in notes.items() if not note.startswith("ClassVar")]
        inherited: tuple[str, ...] = ()
        defaults: dict[str, Any] = {}
        for base in reversed(bases):
            inherited += tuple(getattr(base, "__match_args__", ()))
            defaults.update(getattr(base, "_defaults", {}))
        defaults.update({f: namespace.pop(f) for f in own if f in namespace})
        fields = (*inherited, *(f for f in own if f not in inherited))
        namespace["__slots__"] = tuple(f for f in own if f not in inherited)
        namespace["__match_args__"] = fields
        namespace["_defaults"] = defaults
        cls = super().__new__(mcs, name, bases, namespace)
        if fields and "__init__" not in namespace:
            type.__setattr__(cls, "__init__", _deferred(cls, fields, defaults))
        return cls


def _deferred(cls: type, fields: tuple[str, ...], defaults: dict[str, Any]) -> Any:
    """A first `__init__` that generates the real one, installs it and runs it."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        init = _constructor(f"{cls.__qualname__}.__init__", fields, defaults)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)

    return __init__


def _constructor(qualname: str, fields: tuple[str, ...], defaults: dict[str, Any]) -> Any:
    """`__init__` as plain code, generated once per class as dataclasses do, so building a
    record costs what a hand-written constructor would. A field without a default after
    one with a default is a TypeError here, as it is when a dataclass is defined."""
    params = [f"{f}=_d[{f!r}]" if f in defaults else f for f in fields]
    body = "".join(f"\n _set(self, {f!r}, {f})" for f in fields) or "\n pass"
    scope: dict[str, Any] = {"_set": _set, "_d": defaults}
    try:
        exec(f"def __init__(self, {', '.join(params)}):{body}", scope)
    except SyntaxError as exc:
        raise TypeError(f"{qualname}: a field without a default follows one with a default"
                        ) from exc
    init = scope["__init__"]
    init.__qualname__ = qualname
    return init


class Value(metaclass=ValueType):
    __slots__: ClassVar[tuple[str, ...]] = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

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
