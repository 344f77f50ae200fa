"""A read-only package folder without bytecode gets its bytecode cached in the user's
cache folder; every other install is left as it is."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from wisp.cli import main as cli_main


@pytest.fixture
def writing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def test_read_only_and_uncompiled_caches_in_the_user_folder(
        writing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    cli_main.cache_bytecode_elsewhere()
    assert sys.pycache_prefix == str(writing / "wisp" / "pycache")


@pytest.mark.parametrize("writable, compiled", [(True, False), (False, True)])
def test_writable_or_compiled_packages_are_left_alone(
        writing: Path, monkeypatch: pytest.MonkeyPatch, writable: bool, compiled: bool) -> None:
    monkeypatch.setattr(os, "access", lambda path, mode: writable)
    monkeypatch.setattr(os.path, "exists", lambda path: compiled)
    cli_main.cache_bytecode_elsewhere()
    assert sys.pycache_prefix is None


def test_bytecode_writing_turned_off_is_respected(
        writing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    cli_main.cache_bytecode_elsewhere()
    assert sys.pycache_prefix is None
