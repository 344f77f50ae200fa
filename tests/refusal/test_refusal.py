"""A refusal is handled as the reference handles it (tests/fixtures/reference/refusal):
one retry with a note to the model, then the reference's error."""

from __future__ import annotations

import pytest

from tests.refrun import compare, have_reference, load_fixture
from tests.refusal.scenarios import refusal_scenario


def test_wisp_handles_a_refusal_as_the_reference(tmp_path):
    fixture = load_fixture("refusal/refusal.json")["observations"]
    assert compare(refusal_scenario("wisp", tmp_path), fixture) == []


@pytest.mark.skipif(not have_reference(), reason="the reference CLI is not installed")
def test_the_reference_still_does_so(tmp_path):
    fixture = load_fixture("refusal/refusal.json")["observations"]
    assert compare(refusal_scenario("reference", tmp_path), fixture) == []
