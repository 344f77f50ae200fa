"""Cassettes in tests: replay a recorded run offline, or record one from any model.

    from wisp.testing import ReplayModel

    model = ReplayModel.from_file("tests/cassettes/fix-bug.jsonl", match="loose")
    runtime = Runtime.open(config, sink, model=model)
    ...
    assert model.remaining == 0  # every recorded exchange was asked for

A cassette is what `WISP_RECORD=<file> wisp …` writes (one JSON line per model exchange),
or what `RecordingModel(inner, path)` writes around any model, e.g. a `ScriptedModel`.
`load_cassette(path)` reads its exchanges (dicts: `request`, `events`, `ended`, `error`,
`request_id`, `ts`). The format and the matching rules are in `wisp.models.cassette`.
"""

from __future__ import annotations

from wisp.models.cassette import RecordingModel, ReplayMismatch, ReplayModel
from wisp.models.cassette import read_cassette as load_cassette

__all__ = ["RecordingModel", "ReplayMismatch", "ReplayModel", "load_cassette"]
