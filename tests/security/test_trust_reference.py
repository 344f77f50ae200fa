"""Trust side by side with the reference CLI (Claude Code 2.1.332, when installed: see
`tests.refrun`), in print mode, in one place whose config both read: an untrusted folder's
`.claude/settings.json` allow rule is ignored by both; the record one of them reads trusts
the folder for the other too; neither sends a project memory import from outside the
project, trusted or not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.refrun import REFERENCE, Place, have_reference, print_run
from wisp.testing import ScriptedServer, reply

pytestmark = pytest.mark.skipif(not have_reference(),
                                reason=f"the reference CLI is not installed ({REFERENCE})")
WHICH = ("reference", "wisp")
SECRET = "OUTSIDE-MEMORY-9c1d"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(default=reply.text("done")) as srv:
        yield srv


def place_with_rule(tmp: Path, server: ScriptedServer) -> Place:
    place = Place(tmp, server)
    (place.work / ".claude").mkdir()
    (place.work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    return place


def touch_made(which: str, place: Place, server: ScriptedServer, name: str) -> bool:
    server.script(reply.tool_use("Bash", {"command": f"touch {name}"}), reply.text("done"))
    code, _out, _frames = print_run(which, place, "-p", "go", "--output-format", "json")
    assert code == 0
    return (place.work / name).exists()


@pytest.mark.parametrize("which", WHICH)
def test_an_untrusted_project_allow_rule_is_ignored_by_both(
        tmp_path: Path, server: ScriptedServer, which: str) -> None:
    place = place_with_rule(tmp_path, server)
    assert not touch_made(which, place, server, "untrusted.txt")


def test_a_folder_trusted_for_one_is_trusted_for_the_other(tmp_path: Path,
                                                           server: ScriptedServer) -> None:
    place = place_with_rule(tmp_path, server)
    place.trust()  # the record wisp writes on "Yes"
    assert touch_made("reference", place, server, "by-reference.txt")
    assert touch_made("wisp", place, server, "by-wisp.txt")


@pytest.mark.parametrize("trusted", [False, True])
def test_neither_sends_a_memory_import_from_outside(tmp_path: Path, server: ScriptedServer,
                                                   trusted: bool) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    for which in WHICH:
        place = Place(tmp_path / which, server)
        (place.work / "CLAUDE.md").write_text(f"Notes.\n@{outside}\n")
        if trusted:
            place.trust()
        before = len(server.requests)
        print_run(which, place, "-p", "hi", "--output-format", "json")
        sent = json.dumps([r.body for r in server.requests[before:]])
        assert "Notes." in sent, which  # the memory file itself was sent
        assert SECRET not in sent, which
