"""File checkpoints and `rewind_files` agree with the reference CLI, as recorded in
tests/fixtures/reference/checkpoints/ (re-record: see its README); a fresh reference run
is compared too when the reference is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkpoints.scenarios import disabled_scenario, rewind_scenario
from tests.refrun import REFERENCE, compare, have_reference, load_fixture

SCENARIOS = {"rewind": rewind_scenario, "disabled": disabled_scenario}
needs_reference = pytest.mark.skipif(
    not have_reference(), reason=f"the reference CLI is not installed ({REFERENCE})")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_wisp_does_what_the_reference_does(name: str, tmp_path: Path) -> None:
    fixture = load_fixture(f"checkpoints/{name}.json")["observations"]
    problems = compare(SCENARIOS[name]("wisp", tmp_path), fixture)
    assert not problems, "\n".join(problems)


@needs_reference
@pytest.mark.timeout(600)  # a dozen runs of the reference: slow on a loaded machine
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_reference_still_does_what_the_fixture_says(name: str, tmp_path: Path) -> None:
    fixture = load_fixture(f"checkpoints/{name}.json")["observations"]
    problems = compare(SCENARIOS[name]("reference", tmp_path), fixture)
    assert not problems, "\n".join(problems)
