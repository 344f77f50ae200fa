"""Shared fixtures for the security suite: a workspace (cwd, clean HOME, a folder outside
both) and a module-wide cache so a batched wisp session runs once for all its cases."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.security.harness import Workspace

T = TypeVar("T")
# bypassPermissions is refused to root unless the environment says it is a sandbox.
SANDBOX = {"IS_SANDBOX": "1"} if os.geteuid() == 0 else {}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


class Once:
    """Builds each keyed value once per module: `once("setup-a", lambda root: run(...))`,
    where `root` is a fresh temp folder for that value."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._values: dict[str, Any] = {}

    def __call__(self, key: str, build: Callable[[Path], T]) -> T:
        if key not in self._values:
            try:
                self._values[key] = build(self._factory.mktemp(key.replace("/", "_")[:40]))
            except Exception as exc:  # fail every case of the batch once, not rebuild it
                self._values[key] = exc
        value = self._values[key]
        if isinstance(value, Exception):
            raise value
        return value  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def once(tmp_path_factory: pytest.TempPathFactory) -> Once:
    return Once(tmp_path_factory)
