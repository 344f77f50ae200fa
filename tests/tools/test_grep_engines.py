"""Grep's two engines as they run for real: ripgrep's output read back whatever the file
names hold, and the Python engine's child held to its deadline."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.tools.conftest import Caller, process_gone
from wisp.processes import ProcessRegistry
from wisp.tools import _grep_worker
from wisp.tools._grep_search import Query
from wisp.tools.grep import Grep

needs_rg = pytest.mark.usefixtures("rg")


@pytest.fixture
def child_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wisp.tools.grep.ripgrep", lambda: None)


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    (tmp_path / "a:1:b.txt").write_text("x\nneedle\ny\n\nz\nneedle\n")
    (tmp_path / "b-2-c.txt").write_text("needle\n")
    return tmp_path


def both(call: Caller, monkeypatch: pytest.MonkeyPatch, tool_input: dict) -> tuple[str, str]:
    with_rg = call(Grep(), tool_input)
    monkeypatch.setattr("wisp.tools.grep.ripgrep", lambda: None)
    without = call(Grep(), tool_input)
    monkeypatch.undo()
    assert not with_rg.is_error and not without.is_error, (with_rg, without)
    return str(with_rg.content), str(without.content)


@needs_rg
@pytest.mark.parametrize("numbered", [True, False], ids=["numbered", "plain"])
def test_names_with_colons_and_dashes_read_back_alike(call, monkeypatch, odd_names, numbered):
    rg, python = both(call, monkeypatch, {"pattern": "needle", "output_mode": "content",
                                          "-C": 1, "-n": numbered})
    assert rg == python
    a, b = odd_names / "a:1:b.txt", odd_names / "b-2-c.txt"
    if numbered:
        expected = [f"{a}-1-x", f"{a}:2:needle", f"{a}-3-y", "--", f"{a}-5-z",
                    f"{a}:6:needle", "--", f"{b}:1:needle"]
    else:
        expected = [f"{a}-x", f"{a}:needle", f"{a}-y", "--", f"{a}-z", f"{a}:needle", "--",
                    f"{b}:needle"]
    assert rg.splitlines() == expected


@needs_rg
@pytest.mark.parametrize("mode", ["files_with_matches", "count"])
def test_other_modes_read_back_alike(call, monkeypatch, odd_names, mode):
    rg, python = both(call, monkeypatch, {"pattern": "needle", "output_mode": mode})
    assert rg == python
    assert str(odd_names / "a:1:b.txt") in rg


@pytest.mark.usefixtures("child_engine")
def test_the_child_engine_reports_a_bad_pattern(call: Caller, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    result = call(Grep(), {"pattern": "(unclosed"})
    assert result.is_error
    assert str(result.content).startswith("Invalid regular expression '(unclosed'")


def test_the_child_engine_is_killed_at_its_deadline(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big.txt").write_text(("a" * 40 + "!\n") * 100)
    monkeypatch.setattr(_grep_worker, "SEARCH_TIMEOUT_S", 1.0)
    registry = ProcessRegistry()
    started: list[int] = []
    original_add = registry.add

    def add(pid: int) -> None:
        started.append(pid)
        original_add(pid)

    monkeypatch.setattr(registry, "add", add)
    query = Query(pattern="(a+)+$", root=tmp_path, mode="content")
    begun = time.monotonic()
    answer = asyncio.run(_grep_worker.search_in_child(query, registry, None))
    assert time.monotonic() - begun < 5
    assert isinstance(answer, str) and answer.startswith("Grep timed out after 1s"), answer
    assert started and all(process_gone(pid) for pid in started)


def test_the_child_engine_ends_on_abort(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(("a" * 40 + "!\n") * 100)
    query = Query(pattern="(a+)+$", root=tmp_path, mode="content")

    async def main() -> str:
        abort = asyncio.Event()
        asyncio.get_running_loop().call_later(0.5, abort.set)
        answer = await _grep_worker.search_in_child(query, ProcessRegistry(), abort)
        assert isinstance(answer, str)
        return answer

    begun = time.monotonic()
    assert asyncio.run(main()) == "Grep was interrupted."
    assert time.monotonic() - begun < 3
