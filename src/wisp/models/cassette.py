"""Record and replay of model exchanges: `WISP_RECORD=<file>`, `WISP_REPLAY=<file>`.

Above: `wisp.runtime.build` wraps the session's model with `wrap_for_env`; tests use
`RecordingModel` / `ReplayModel` (also in `wisp.testing`). Below: any `Model` — this works
on `ModelRequest`s and the Anthropic-shaped event dicts every provider yields, so it knows
no provider.

A cassette is JSONL, one line per exchange, appended with one `write` when the exchange
ends (O_APPEND under an exclusive `flock`: concurrent exchanges, subagents' or other
processes', never interleave, and a killed process leaves whole lines; should one die
inside its write, the next append starts a fresh line and the reader skips the torn one):

    {"v":1,"ts":"2025-06-01T12:00:00.123Z","ms":812,"spec":"anthropic:claude-…",
     "request":{…ModelRequest.body()…},"request_id":"req_…","events":[{…},…],
     "ended":"complete","paths":{"cwd":"/home/me/proj","home":"/home/me","tmp":"/tmp"}}

`ended` is `complete` (message_stop seen), `error` (with `"error": {"class", "status",
"type", "message", "retry_after", "at": "open"|"stream"}`, after the events that arrived)
or `abandoned` (the consumer closed the stream early: the events so far). `paths` is
what loose matching treats as volatile. Values of
secret-looking environment variables (…_KEY, …_TOKEN, …SECRET…) are replaced by
`[REDACTED]` wherever they occur in a line; the replay side redacts its requests the same
way before matching.

Replay serves each exchange once, to the first unconsumed one whose request matches: in
`strict` mode the bodies must be equal but for `metadata`; `loose` also ignores ids
(renumbered in first-seen order, so pairings still count), dates, times, the `Platform:`
line of the system prompt, and the run's paths (cwd, home, temp dir). An abandoned
exchange replays its events, then waits until the consumer closes it.

Importing this module costs under a millisecond (no dataclasses; regexes compiled on first
use; asyncio and tempfile imported when needed), and `build.py` imports it only when one of
the variables is set, so a run without them pays nothing.

The parts: `cassette_file` (the file: appends, reads, redaction, recorded errors),
`cassette_record` (`RecordingModel`), `cassette_replay` (`ReplayModel`) and
`cassette_match` (what loose matching ignores); this module chooses between them from
the environment and keeps every name importable from here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from wisp.errors import UsageError
from wisp.models.base import Model
from wisp.models.cassette_file import (
    REDACTED,
    TRANSPORT_FIELDS,
    VERSION,
    append_line,
    error_record,
    read_cassette,
    replay_error,
    run_paths,
    secret_values,
    writable,
)
from wisp.models.cassette_match import Loose
from wisp.models.cassette_record import RecordingModel, RecordingStream
from wisp.models.cassette_replay import ReplayMismatch, ReplayModel, ReplayStream

# `wrap_for_env` and the models are the interface; the rest stay importable from here as
# they were before the module was split.
__all__ = [
    "REDACTED",
    "TRANSPORT_FIELDS",
    "VERSION",
    "Loose",
    "RecordingModel",
    "RecordingStream",
    "ReplayMismatch",
    "ReplayModel",
    "ReplayStream",
    "append_line",
    "error_record",
    "read_cassette",
    "replay_error",
    "run_paths",
    "secret_values",
    "wrap_for_env",
    "writable",
]


def wrap_for_env(make_model: Callable[[], Model], env: Mapping[str, str], *,
                 spec: str | None = None) -> Model:
    """The session's model as `WISP_REPLAY` / `WISP_RECORD` / `WISP_REPLAY_MATCH` ask:
    a `ReplayModel` of the file (`make_model` never called), a `RecordingModel` around
    `make_model()`, or `make_model()` itself. With both set, the replay is recorded too.
    A cassette that cannot be read, or written, is a `UsageError`."""
    replay, record = env.get("WISP_REPLAY"), env.get("WISP_RECORD")
    if record:
        if replay and os.path.abspath(record) == os.path.abspath(replay):
            raise UsageError("WISP_RECORD and WISP_REPLAY name the same file")
        writable(record)  # before a provider is made
    model: Model
    if replay:
        match = env.get("WISP_REPLAY_MATCH") or "strict"
        if match not in ("strict", "loose"):
            raise UsageError(f"WISP_REPLAY_MATCH must be strict or loose (got {match!r})")
        model = ReplayModel.from_file(replay, match=match, env=env)
    else:
        model = make_model()
    if record:
        model = RecordingModel(model, record, spec=spec, env=env)
    return model
