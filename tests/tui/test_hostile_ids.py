"""A long tool result is saved whole under a name wisp makes, never one built from the
model's `tool_use` id.

Before: a result over 20,000 characters was written to `<tool-output>/<id>.txt`, the id
unchecked, so an id of `../../x` or `/tmp/x` wrote a file there with no permission check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tui.harness import TuiSetup
from wisp.testing import reply

LONG = 25_000  # past the view's 20,000 (so it saves), short of Bash's own 30,000 clip


def hostile_ids(tmp_path: Path) -> dict[str, Path]:
    """Each id, and the file it would have written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    climb = "../" * 12 + str(outside / "climbed").lstrip("/")
    return {climb: outside / "climbed.txt", str(outside / "absolute"): outside / "absolute.txt"}


@pytest.mark.timeout(90)
def test_an_id_that_is_a_path_writes_nothing_there(tui: TuiSetup, tmp_path: Path) -> None:
    ids = hostile_ids(tmp_path)
    command = f"head -c {LONG} /dev/zero | tr '\\0' q | fold -w 100"
    script = [reply.tool_use("Bash", {"command": command}, id=i) for i in ids]
    tui.server.script(*script, reply.text("SAVED-DONE."))
    term = tui.terminal("--allowedTools", "Bash", width=200)
    term.ready()
    term.submit("print a lot")
    term.wait_for("SAVED-DONE", timeout=30)
    screen = term.scrollback().replace("\n", "")
    for target in ids.values():
        assert not target.exists(), f"{target} was written"
    shown = re.findall(r"\(full output: (\S+?)\)", screen)
    assert len(shown) == 2, screen
    folder = tui.home / ".wisp" / "tool-output"
    for path in map(Path, shown):
        assert path.parent == folder, path
        assert path.read_text() == "\n".join(["q" * 100] * (LONG // 100))
    assert shown[0] != shown[1]  # one file per result
