"""The base of the engine's events: frozen `__slots__` records built from annotations.

Plain `__slots__` classes rather than dataclasses or NamedTuples: events are defined at
start-up and created on the hot path (one per stream delta), and a dataclass costs about
a hundred times more to define. Each event class (`wisp.engine.events`) lists its fields
once, as annotations (with defaults, and `_: KW_ONLY` before the keyword-only ones);
`_Fields` builds its slots and constructor from them. Assigning to a field of an
`EventRecord` raises, so an event is frozen once built.
"""

from __future__ import annotations

from typing import Any, ClassVar, dataclass_transform

_set = object.__setattr__


@dataclass_transform(eq_default=True, frozen_default=True)
class _Fields(type):
    """Gives a class `__slots__` (sorted, as `repr` lists them) and, unless it writes its
    own, an `__init__` taking its fields in order, from its annotations (strings here, as
    `from __future__ import annotations` leaves them). A field's class-level default
    becomes the parameter's (slots cannot coexist with a class attribute of that name)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _Fields:
        notes: dict[str, str] = namespace.get("__annotations__", {})
        fields = [f for f, note in notes.items() if not _skipped(note)]
        defaults = {f: namespace.pop(f) for f in fields if f in namespace}
        namespace["__slots__"] = tuple(sorted(fields))
        cls = super().__new__(mcs, name, bases, namespace)
        if fields and "__init__" not in namespace:
            cls.__init__ = _deferred(cls, notes, defaults)  # type: ignore[misc]
        return cls


def _skipped(note: str) -> bool:
    return note.startswith("ClassVar") or note == "KW_ONLY"


def _deferred(cls: type, notes: dict[str, str], defaults: dict[str, Any]) -> Any:
    """A first `__init__` that generates the real one, installs it and runs it: most
    classes are never built in a run, so start-up does not pay to compile theirs."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        init = _constructor(f"{cls.__qualname__}.__init__", notes, defaults)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)

    return __init__


def _constructor(qualname: str, notes: dict[str, str], defaults: dict[str, Any]) -> Any:
    """`__init__` as plain code (generated once per class, as dataclasses do), so building
    an event costs no more than the hand-written constructor did."""
    params: list[str] = []
    body: list[str] = []
    for field, note in notes.items():
        if note == "KW_ONLY":
            params.append("*")
        elif not _skipped(note):
            params.append(f"{field}=_d[{field!r}]" if field in defaults else field)
            body.append(f"_set(self, {field!r}, {field})")
    scope: dict[str, Any] = {"_set": _set, "_d": defaults}
    exec(f"def __init__(self, {', '.join(params)}):\n " + "\n ".join(body), scope)
    init = scope["__init__"]
    init.__qualname__ = qualname
    return init


class EventRecord(metaclass=_Fields):
    __slots__: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _names(self) -> tuple[str, ...]:
        return type(self).__slots__

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._names())

    __hash__ = None  # type: ignore[assignment]  # fields hold dicts

