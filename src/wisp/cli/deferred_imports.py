"""Standard modules that a run imports but may never use, loaded on first use.

`import asyncio` is most of a `wisp -p` run on CPython 3.11. Two of the modules it loads
at import time are seldom used: `ssl` (~12% of a run's instructions: OpenSSL's libraries,
plus `asyncio.sslproto`, which reads `ssl` as it loads) is needed only for a TLS
connection, and a local model server or the test suite speaks plain HTTP; `inspect` (~5%,
with `ast` and `dis`) only when something inspects a function. Before the first frame,
`pathlib` imports `urllib.parse`, which imports `ipaddress` (~1 ms) for a check of
bracketed hosts in URLs that wisp's start-up never parses. Each is replaced in
`sys.modules`, before asyncio loads, by an empty module that loads the real one into
itself the first time any attribute is read, so `asyncio.base_events.ssl` and a later
`import ssl` are the same, complete module from then on.

One question is answered without loading: every socket asyncio connects or wraps is
checked with `isinstance(sock, ssl.SSLSocket)`, and before `ssl` has loaded no object
can be an `SSLSocket`. `ssl.SSLSocket` is therefore there from the start, as a stand-in
that answers such checks with False until the module loads (and as the real class
after); anything else done with it (calling it, subclassing it) loads the module.

`importlib.util.LazyLoader` defers the same way, but on 3.11 a second thread reading the
module while the first is loading it sees it half-built; here the load holds a lock.
Only the CLI uses this: it owns its process, unlike `wisp.sdk`, which runs in a host's.
"""

from __future__ import annotations

import sys
import threading
import types
from importlib.machinery import ModuleSpec, PathFinder


class Deferrable:
    """A module to defer: what must be importable for it to load (checked up front:
    asyncio treats an `ssl` that fails to import as absent, a stand-in could not fail
    then), and the classes no object can be an instance of before it loads."""

    def __init__(self, needs: tuple[str, ...] = (), classes: tuple[str, ...] = ()) -> None:
        self.needs = needs
        self.classes = classes


DEFERRABLE: dict[str, Deferrable] = {
    "ssl": Deferrable(needs=("_ssl",), classes=("SSLSocket",)),
    "asyncio.sslproto": Deferrable(needs=("_ssl",)),
    "inspect": Deferrable(),
    # urllib.parse checks bracketed hosts with it; pathlib imports urllib.parse
    "ipaddress": Deferrable(),
}

_loading = threading.RLock()
_in_progress: dict[str, int] = {}  # names whose code is running now → the loading thread


class DeferredModule(types.ModuleType):
    """Stands in for a module until an attribute of it is first read."""

    def __getattr__(self, attribute: str) -> object:
        if _loading_here(self.__name__):  # the module's own code, asking about itself
            raise AttributeError(f"partially initialised module {self.__name__!r} has "
                                 f"no attribute {attribute!r} (yet)")
        _load_into(self)
        return object.__getattribute__(self, attribute)


class ClassBeforeLoad:
    """Stands in for a class of a deferred module: an instance check says no until the
    module has loaded (nothing can be an instance before), the real class's answer after;
    any other use loads the module and goes to the real class."""

    def __init__(self, module: DeferredModule, name: str) -> None:
        self._module = module
        self._name = name

    def real(self) -> type:
        name = f"{self._module.__name__}.{self._name}"
        if _loading_here(self._module.__name__):
            raise ImportError(f"{name} used while its module loads", name=name)
        _load_into(self._module)  # its code defines the real class in our place
        cls = object.__getattribute__(self._module, self._name)
        if not isinstance(cls, type):
            raise ImportError(f"{name} is not a class once loaded", name=name)
        return cls

    def _loaded(self) -> bool:
        return type(self._module) is not DeferredModule

    def __instancecheck__(self, instance: object) -> bool:
        return self._loaded() and isinstance(instance, self.real())

    def __subclasscheck__(self, subclass: type) -> bool:
        return self._loaded() and issubclass(subclass, self.real())

    def __mro_entries__(self, bases: tuple[object, ...]) -> tuple[type, ...]:
        return (self.real(),)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.real()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> object:
        return getattr(self.real(), attribute)

    def __repr__(self) -> str:
        return f"<{self._module.__name__}.{self._name}, not loaded yet>"


def defer_unused_stdlib() -> None:
    """Put stand-ins in `sys.modules` for what is deferrable and not yet imported."""
    for name, deferrable in DEFERRABLE.items():
        if name not in sys.modules and all(_findable(n) for n in deferrable.needs):
            stand_in = DeferredModule(name)
            if "." not in name:  # a submodule's spec needs its package, not loaded yet
                spec = PathFinder.find_spec(name)
                if spec is None:
                    continue
                _describe(stand_in, spec)  # `importlib.util.find_spec` answers as ever
            for cls in deferrable.classes:
                setattr(stand_in, cls, ClassBeforeLoad(stand_in, cls))
            sys.modules[name] = stand_in


def _describe(module: types.ModuleType, spec: ModuleSpec) -> None:
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__package__ = spec.parent


def _loading_here(name: str) -> bool:
    return _in_progress.get(name) == threading.get_ident()


def _findable(name: str) -> bool:
    return name in sys.builtin_module_names or PathFinder.find_spec(name) is not None


def _load_into(stand_in: DeferredModule) -> None:
    """Run the real module's code in the stand-in's namespace, so that every holder of
    the stand-in has the real module, then make it a plain module again."""
    with _loading:
        if type(stand_in) is not DeferredModule:  # another thread loaded it meanwhile
            return
        name = stand_in.__name__
        spec = stand_in.__spec__ or _spec_of(name)
        if spec.loader is None:
            raise ImportError(f"deferred module {name} has no loader", name=name)
        _describe(stand_in, spec)
        sys.modules[name] = stand_in
        _in_progress[name] = threading.get_ident()
        try:
            spec.loader.exec_module(stand_in)
        finally:
            del _in_progress[name]
        object.__setattr__(stand_in, "__class__", types.ModuleType)  # a plain module again
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, stand_in)


def _spec_of(name: str) -> ModuleSpec:
    parent, _, _ = name.rpartition(".")
    search = getattr(sys.modules[parent], "__path__", None) if parent else None
    spec = PathFinder.find_spec(name, search)
    if spec is None:
        raise ImportError(f"deferred module {name} is no longer importable", name=name)
    return spec
