"""`Value`: what `@dataclass(frozen=True)` gives a small record, without its start-up cost.

`@dataclass(frozen=True)` writes six methods as source text and compiles each one when
the class is defined (a plain `@dataclass`, three): 0.4-0.8 ms a class here, and the `-p`
path defined thirty-one dataclasses before its first model call (the loop's decisions and
outcomes, the session, its contexts, permission verdicts, hook matchers…), a sixth of its
CPU time. A `Value` lists its fields as a dataclass does, as annotations with optional
defaults, and gets the same behaviour from code written once, here:

- `__init__` taking the fields in order, base classes' first (generated on the first
  instance, as `wisp.engine.events` does: most records are never built in a run);
- equality field by field, only with an instance of the very same class (a subclass with
  the same fields is not equal), and the hash of the same tuple;
- `Name(field=value, …)` as repr, in field order;
- frozen: assigning or deleting an attribute raises `FrozenError` (an AttributeError, as
  the dataclass's FrozenInstanceError is);
- `__match_args__`, so `case Finish(reason)` matches positionally as with a dataclass;
- copy and pickle.

`Record` is the same for a mutable dataclass (`@dataclass`): fields may be assigned, an
instance takes other attributes too, it has no hash, and `field(default_factory=…)` gives
a field a fresh default per instance. For both, `replace` stands in for
`dataclasses.replace`. A record that holds itself shows `...` there in its repr.

Known limits (what a dataclass has and these do not):
- they are not dataclasses: `dataclasses.fields`, `asdict`, `astuple` and `replace` raise
  TypeError and `is_dataclass` is False. The field names are `__match_args__`, in order;
- no `__post_init__`, `InitVar`, `KW_ONLY`, `order=True` comparisons, `slots=True`, and
  `field` takes only `default_factory` (no `init=`, `repr=`, `compare=`, `kw_only=`);
- a `ClassVar` is recognised by its spelling (`ClassVar[…]` or `typing.ClassVar[…]`), so
  an aliased import of it would be taken for a field;
- a class that writes its own `__init__` keeps it; the names `_fields` and `_defaults` are
  taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast, dataclass_transform

_set = object.__setattr__
_T = TypeVar("_T")
_R = TypeVar("_R", bound="Value | Record")


class _Factory:
    """A field's default made afresh for each instance (what `field` returns)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """`dataclasses.field(default_factory=…)`, for a `Record`'s mutable defaults."""
    return cast(_T, _Factory(default_factory))


def replace(record: _R, **changes: Any) -> _R:
    """`dataclasses.replace`: a new record of the same class, with `changes` (field names)
    over the old one's fields; an unknown name is a TypeError, from `__init__`."""
    fields = {name: getattr(record, name) for name in record.__match_args__}
    return type(record)(**{**fields, **changes})


class FrozenError(AttributeError):
    """Raised on assignment to a `Value`: `dataclasses.FrozenInstanceError` by another name
    (that one lives in `dataclasses`, which this module exists not to need)."""


@dataclass_transform(eq_default=True, frozen_default=True)
class ValueType(type):
    """Makes a `Value` class from its annotations (strings, as `from __future__ import
    annotations` leaves them; `ClassVar` ones are not fields): its fields after its bases'
    in `__match_args__`, and their defaults kept for `__init__`. As on a dataclass, a
    plain default stays a class attribute (`RetryPolicy.max_retries` reads it) and a
    factory does not."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> ValueType:
        notes: dict[str, Any] = namespace.get("__annotations__", {})
        own = [f for f, note in notes.items() if not _class_var(note)]
        inherited: tuple[str, ...] = ()
        defaults: dict[str, Any] = {}
        for base in reversed(bases):
            inherited += tuple(getattr(base, "__match_args__", ()))
            defaults.update(getattr(base, "_defaults", {}))
        for f in own:
            if f in namespace:
                defaults[f] = namespace[f]
                if isinstance(namespace[f], _Factory):
                    del namespace[f]
        fields = (*inherited, *(f for f in own if f not in inherited))
        namespace["__match_args__"] = fields
        namespace["_defaults"] = defaults
        cls = super().__new__(mcs, name, bases, namespace)
        if fields and "__init__" not in namespace:
            type.__setattr__(cls, "__init__", _deferred(cls, fields, defaults))
        return cls


@dataclass_transform(eq_default=True, field_specifiers=(field,))
class RecordType(ValueType):
    """`ValueType` for a mutable `Record`."""


def _class_var(note: Any) -> bool:
    """A `ClassVar` annotation, as a string (`from __future__ import annotations`) or not."""
    if isinstance(note, str):
        return note.startswith(("ClassVar", "typing.ClassVar"))
    return note is ClassVar or getattr(note, "__origin__", None) is ClassVar


_NOTHING: Any = object()  # a factory field's parameter when the caller gave none


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
    params = [f if f not in defaults else f"{f}=_n" if isinstance(defaults[f], _Factory)
              else f"{f}=_d[{f!r}]" for f in fields]
    body = "".join(f"\n _set(self, {f!r}, _d[{f!r}].make() if {f} is _n else {f})"
                   if isinstance(defaults.get(f), _Factory) else f"\n _set(self, {f!r}, {f})"
                   for f in fields) or "\n pass"
    scope: dict[str, Any] = {"_set": _set, "_d": defaults, "_n": _NOTHING}
    try:
        exec(f"def __init__(self, {', '.join(params)}):{body}", scope)
    except SyntaxError as exc:
        raise TypeError(f"{qualname}: a field without a default follows one with a default"
                        ) from exc
    init = scope["__init__"]
    init.__qualname__ = qualname
    return init


# What `Value` and `Record` share, as functions both classes take as methods: a common
# base class would do too, but its extra level in every record's MRO makes defining a
# record class about a tenth slower (measured), and the `-p` path defines dozens of them.


def _field_values(self: Any) -> tuple[Any, ...]:
    """The fields' values in order (`__match_args__`, which `ValueType` fills)."""
    return tuple(getattr(self, name) for name in self.__match_args__)


def _equal_fields(self: Any, other: object) -> bool:
    """Equality field by field, only with an instance of the very same class."""
    if other.__class__ is not self.__class__:
        return cast(bool, NotImplemented)  # NotImplemented: as `__eq__` answers it
    return _field_values(self) == _field_values(other)


def _fields_repr(self: Any) -> str:
    """`Name(field=value, …)`; a record that holds itself, directly or not, shows `...`
    there, as a dataclass does."""
    key = id(self)
    if key in _SHOWING:
        return "..."
    _SHOWING.add(key)
    try:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
    finally:
        _SHOWING.discard(key)
    return f"{self.__class__.__qualname__}({shown})"


_SHOWING: set[int] = set()


class Value(metaclass=ValueType):
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _fields = _field_values
    __eq__ = _equal_fields
    __repr__ = _fields_repr

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type[Value], tuple[Any, ...]]:
        """copy and pickle rebuild through `__init__`, which takes the fields in order."""
        return (self.__class__, self._fields())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}")


class Record(metaclass=RecordType):
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _fields = _field_values
    __eq__ = _equal_fields
    __repr__ = _fields_repr
    __hash__ = None  # type: ignore[assignment]  # mutable, as an eq dataclass's
