"""wisp formats its own UUIDs (the `uuid` module is too slow to import before the first
frame); they must be exactly what `uuid.uuid4()` would give."""

import uuid

import pytest

from wisp.stamps import is_canonical_uuid, new_uuid


def test_new_uuid_is_a_canonical_version_4_uuid() -> None:
    seen = set()
    for _ in range(5000):
        value = new_uuid()
        parsed = uuid.UUID(value)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == value
        seen.add(value)
    assert len(seen) == 5000


@pytest.mark.parametrize(("value", "canonical"), [
    # Fixed values: parameter ids must be the same in every xdist worker.
    ("8f161312-5890-4cea-9beb-c9b62930898c", True),
    ("A3C562D6-B6E1-46AB-BDC2-CEA076A372B9", True),
    ("11111111-2222-3333-4444-555555555555", True),
    ("1111111122223333444455555555555", False),
    ("{11111111-2222-3333-4444-555555555555}", False),
    ("11111111-2222-3333-4444-5555555555550", False),
    ("11111111-2222-3333-4444-55555555555g", False),
    ("", False),
])
def test_canonical_uuid_check_matches_the_uuid_module(value: str, canonical: bool) -> None:
    assert is_canonical_uuid(value) is canonical
    try:
        expected = str(uuid.UUID(value)) == value.lower()
    except ValueError:
        expected = False
    assert expected is canonical
