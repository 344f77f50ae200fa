"""The NDJSON writer keeps every line within what the Python SDK accepts."""

from __future__ import annotations

import io
import json

from wisp.wire.writer import MAX_LINE_CHARS, NDJSONWriter, fitted_line


def test_small_frames_are_untouched():
    frame = {"type": "user", "message": {"content": "x" * 1000}}
    assert json.loads(fitted_line(frame)) == frame


def test_an_oversized_frame_is_shortened_to_fit_and_stays_valid_json():
    frame = {"type": "user", "tool_use_result": {"stdout": "a" * 3_000_000},
             "message": {"content": [{"type": "tool_result", "content": "b" * 3_000_000}]},
             "uuid": "keep-me"}
    stream = io.BytesIO()
    NDJSONWriter(stream).write(frame)
    line = stream.getvalue().decode()
    assert line.endswith("\n") and line.count("\n") == 1
    assert len(line) <= MAX_LINE_CHARS
    parsed = json.loads(line)
    assert parsed["uuid"] == "keep-me"
    assert "stream-json line limit" in parsed["tool_use_result"]["stdout"]
