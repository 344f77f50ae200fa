"""wisp's Messages API requests carry what the reference's do for each model-facing
option (tests/fixtures/reference/requests/options.json, recorded by
`python -m tests.record_reference requests`); with the reference installed, a fresh run
of it is checked against the same fixture."""

from __future__ import annotations

import pytest

from tests.refrun import compare, have_reference, load_fixture
from tests.request_parity.scenarios import options_scenario


def test_wisp_requests_match_the_reference(tmp_path):
    fixture = load_fixture("requests/options.json")["observations"]
    assert compare(options_scenario("wisp", tmp_path), fixture) == []


@pytest.mark.skipif(not have_reference(), reason="the reference CLI is not installed")
def test_the_reference_still_sends_what_was_recorded(tmp_path):
    fixture = load_fixture("requests/options.json")["observations"]
    assert compare(options_scenario("reference", tmp_path), fixture) == []
