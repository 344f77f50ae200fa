"""The checkpoint store behind `rewind_files` (wisp.sessions.checkpoints), in process."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from wisp.sessions.checkpoints import (
    MAX_SNAPSHOTS,
    NOT_FOUND,
    FileHistory,
    enabled,
)
from wisp.tools.bash import Bash
from wisp.tools.edit import Edit
from wisp.tools.write import Write


@pytest.fixture
def history(tmp_path: Path) -> FileHistory:
    return FileHistory(tmp_path / "config" / "file-history" / "session")


def test_the_sdk_switch() -> None:
    assert enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"})
    assert enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1"})
    assert not enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "false"})
    assert not enabled({})


def test_rewinding_restores_edits_and_deletes_files_created_since(
        history: FileHistory, tmp_path: Path) -> None:
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("one\ntwo\n")
    history.snapshot("m1")
    history.before_write(str(old))
    old.write_text("one\nTWO\nthree\n")
    history.snapshot("m2")
    history.before_write(str(new))
    new.write_text("fresh\n")

    preview = history.rewind("m1", dry_run=True)
    assert preview == {"canRewind": True, "filesChanged": [str(old), str(new)],
                       "insertions": 1, "deletions": 3}
    assert new.exists()  # a dry run writes nothing
    assert history.rewind("m2", dry_run=False) == {"canRewind": True, "skippedLinks": 0}
    assert old.read_text() == "one\nTWO\nthree\n" and not new.exists()
    history.rewind("m1", dry_run=False)
    assert old.read_text() == "one\ntwo\n"
    assert history.rewind("m1", dry_run=True)["filesChanged"] == []


def test_backups_are_named_like_the_references(history: FileHistory, tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("v1\n")
    history.snapshot("m1")
    history.before_write(str(path))
    path.write_text("v2\n")
    history.snapshot("m2")  # changed since its backup: a new version
    history.snapshot("m3")  # unchanged: the same backup again
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    assert sorted(p.name for p in history.folder.iterdir()) == [f"{digest}@v1", f"{digest}@v2"]
    assert history.snapshots[2].backups == history.snapshots[1].backups


def test_unknown_messages_and_ids_before_any_message(history: FileHistory,
                                                     tmp_path: Path) -> None:
    history.before_write(str(tmp_path / "x"))  # no message yet: nothing recorded
    assert history.tracked == {}
    assert history.rewind("nope", dry_run=True) == {"canRewind": False, "error": NOT_FOUND}
    assert history.rewind(None, dry_run=False) == {"canRewind": False, "error": NOT_FOUND}


def test_the_file_mode_comes_back(history: FileHistory, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    history.snapshot("m1")
    history.before_write(str(script))
    script.write_text("changed\n")
    script.chmod(0o600)
    history.rewind("m1", dry_run=False)
    assert script.read_text() == "#!/bin/sh\n"
    assert os.stat(script).st_mode & 0o777 == 0o755


def test_a_link_in_the_files_place_is_left_alone(history: FileHistory, tmp_path: Path) -> None:
    path, elsewhere = tmp_path / "f.txt", tmp_path / "elsewhere.txt"
    path.write_text("mine\n")
    elsewhere.write_text("not mine\n")
    history.snapshot("m1")
    history.before_write(str(path))
    path.unlink()
    path.symlink_to(elsewhere)
    assert history.rewind("m1", dry_run=False) == {"canRewind": True, "skippedLinks": 1}
    assert elsewhere.read_text() == "not mine\n"


def test_only_file_writing_tools_are_tracked(history: FileHistory, tmp_path: Path) -> None:
    history.snapshot("m1")
    history.before_tool(Write(), {"file_path": "w.txt", "content": ""}, tmp_path)
    history.before_tool(Edit(), {"file_path": str(tmp_path / "e.txt"),
                                     "old_string": "a", "new_string": "b"}, tmp_path)
    history.before_tool(Bash(), {"command": "echo > b.txt"}, tmp_path)
    assert list(history.tracked) == [str(tmp_path / "w.txt"), str(tmp_path / "e.txt")]


def test_old_snapshots_are_forgotten(history: FileHistory) -> None:
    for n in range(MAX_SNAPSHOTS + 5):
        history.snapshot(f"m{n}")
    assert len(history.snapshots) == MAX_SNAPSHOTS
    assert history.rewind("m0", dry_run=True)["canRewind"] is False
    assert history.rewind(f"m{MAX_SNAPSHOTS + 4}", dry_run=True)["canRewind"] is True
