"""Slash commands in prompts (print mode and duplex) agree with the reference CLI, as
recorded in tests/fixtures/reference/commands/ (re-record: see its README). A fresh
reference run is compared too when the reference is installed, so the fixtures can't
drift from what it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.commands.scenarios import duplex_scenario, print_scenario
from tests.refrun import REFERENCE, compare, have_reference, load_fixture

SCENARIOS = {"duplex": duplex_scenario, "print": print_scenario}
# Where wisp differs on purpose, and what it does instead (checked below).
WISP_DIFFERS = {
    # The reference (2.1.332) reads `$1` as the second argument and leaves `$2` alone
    # when there are two; wisp keeps the documented meaning: `$1` is the first.
    "model_input /sub:deep a b": "positional arguments are 1-based",
    "result /sub:deep a b": "positional arguments are 1-based",
}
needs_reference = pytest.mark.skipif(
    not have_reference(), reason=f"the reference CLI is not installed ({REFERENCE})")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_wisp_does_what_the_reference_does(name: str, tmp_path: Path) -> None:
    fixture = load_fixture(f"commands/{name}.json")["observations"]
    seen = SCENARIOS[name]("wisp", tmp_path)
    problems = compare(seen, fixture, WISP_DIFFERS)
    assert not problems, "\n".join(problems)
    if name == "duplex":
        assert seen["model_input /sub:deep a b"][1] == "Deep command body a / b"


@needs_reference
@pytest.mark.timeout(600)  # a dozen runs of the reference: slow on a loaded machine
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_reference_still_does_what_the_fixture_says(name: str, tmp_path: Path) -> None:
    fixture = load_fixture(f"commands/{name}.json")["observations"]
    problems = compare(SCENARIOS[name]("reference", tmp_path), fixture)
    assert not problems, "\n".join(problems)
