"""Races made deterministic: another writer's change lands between a read and the write
that follows it. The store is the real one; only the moment of the other write is
arranged, just before the first document write (`update` or `modify`) of a kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wisp.serve.store.base import Store


class OtherWriteFirst:
    """`store`, where `other_write()` runs once, just before the first `update` or
    `modify` of a document whose kind starts with `kind_prefix` (armed by `arm`)."""

    def __init__(self, store: Store, kind_prefix: str) -> None:
        self.store = store
        self.kind_prefix = kind_prefix
        self.pending: Callable[[], object] | None = None
        self.fired = False

    def arm(self, other_write: Callable[[], object]) -> None:
        self.pending = other_write

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _before_write(self, kind: str) -> None:
        if kind.startswith(self.kind_prefix) and self.pending is not None:
            other_write, self.pending = self.pending, None
            other_write()
            self.fired = True

    def update(self, kind: str, *args: Any) -> Any:
        self._before_write(kind)
        return self.store.update(kind, *args)

    def modify(self, kind: str, *args: Any) -> Any:
        self._before_write(kind)
        return self.store.modify(kind, *args)
