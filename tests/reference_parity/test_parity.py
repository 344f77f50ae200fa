"""wisp against the reference CLI's recorded behaviour: hook semantics (continue:false,
UserPromptSubmit block, deny texts, approve, systemMessage), the budget, the result's
origin, and the control requests (mcp_set_servers, mcp_status, get_usage, list_models,
get_session_cost, reload_skills, read_file, get_plan, a repeated request id).

Each scenario's fixture (tests/fixtures/reference/, recorded by `record.py` from Claude
Code 2.1.332) holds the digest wisp's run must give, except where the scenario says wisp
differs on purpose. Where the reference is installed, it is run again too, so a fixture
that no longer says what the reference does is noticed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.frame_check import check_frame
from tests.reference_parity.driver import REFERENCE, drive, reference_cli, wisp_cli
from tests.reference_parity.record import fixture_path
from tests.reference_parity.scenarios import CASES, Case

JSON = dict[str, Any]
NAMES = sorted(CASES)


def recorded(case: Case) -> JSON:
    digest: JSON = json.loads(fixture_path(case).read_text())["digest"]
    return digest


@pytest.mark.parametrize("name", NAMES)
def test_wisp_does_what_the_reference_was_recorded_doing(name: str) -> None:
    case = CASES[name]
    run = asyncio.run(drive(wisp_cli(), case.scenario, check=check_frame))
    assert case.digest(run, case.scenario) == {**recorded(case), **case.wisp_differs}, run.stderr


@pytest.mark.skipif(not REFERENCE.exists(), reason="the reference CLI is not installed "
                    "(python bench/run.py --install-reference, or WISP_REFERENCE_CLI)")
@pytest.mark.parametrize("name", NAMES)
def test_the_reference_still_does_what_was_recorded(name: str) -> None:
    case = CASES[name]
    run = asyncio.run(drive(reference_cli(), case.scenario))
    assert case.digest(run, case.scenario) == recorded(case)


def test_every_scenario_has_its_fixture() -> None:
    missing = [name for name, case in CASES.items() if not fixture_path(case).exists()]
    assert not missing, "record them: python -m tests.reference_parity.record " + " ".join(
        missing)
