from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import Caller
from wisp.tools.edit import Edit
from wisp.tools.read import Read
from wisp.tools.write import Write


def test_write_creates_file_and_parents(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "f.txt"
    result = call(Write(), {"file_path": str(target), "content": "hello\n"})
    assert not result.is_error
    assert result.content == f"File created successfully at: {target}"
    assert target.read_text() == "hello\n"
    assert result.data["type"] == "create"
    assert result.data["filePath"] == str(target)
    assert result.data["content"] == "hello\n"


def test_write_overwrites_and_reports_update(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old\n")
    result = call(Write(), {"file_path": "f.txt", "content": "new\r\nline\n"})
    assert result.content == f"The file {target} has been updated."
    assert result.data["type"] == "update"
    assert target.read_bytes() == b"new\r\nline\n"
    assert result.data["structuredPatch"][0]["lines"][0] == "-old"


def test_write_to_a_directory_fails(call: Caller, tmp_path: Path) -> None:
    result = call(Write(), {"file_path": str(tmp_path), "content": "x"})
    assert result.is_error


def test_edit_replaces_unique_string(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "code.py"
    target.write_text("def f():\n    return 1\n")
    result = call(
        Edit(),
        {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"},
    )
    assert not result.is_error, result.content
    assert target.read_text() == "def f():\n    return 2\n"
    assert f"The file {target} has been updated" in str(result.content)
    assert "     2\t    return 2" in str(result.content)
    assert result.data["filePath"] == str(target)
    assert result.data["oldString"] == "return 1"
    assert result.data["newString"] == "return 2"
    assert result.data["replaceAll"] is False
    assert result.data["originalFile"] == "def f():\n    return 1\n"


def test_edit_with_ambiguous_string_fails_and_leaves_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "dup.txt"
    target.write_text("x = 1\nx = 1\nx = 1\n")
    result = call(Edit(), {"file_path": str(target), "old_string": "x = 1", "new_string": "y"})
    assert result.is_error
    assert result.content == (
        "Found 3 matches of the string to replace, but replace_all is false. To replace all "
        "occurrences, set replace_all to true. To replace only one occurrence, please provide "
        "more context to uniquely identify the instance."
    )
    assert target.read_text() == "x = 1\nx = 1\nx = 1\n"


def test_edit_replace_all(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "dup.txt"
    target.write_text("a-b-a-b-a\n")
    result = call(
        Edit(),
        {"file_path": str(target), "old_string": "a", "new_string": "Z", "replace_all": True},
    )
    assert not result.is_error
    assert target.read_text() == "Z-b-Z-b-Z\n"
    assert "3 occurrences" in str(result.content)
    assert result.data["replaceAll"] is True


def test_edit_string_not_found(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("abc\n")
    result = call(Edit(), {"file_path": str(target), "old_string": "zzz", "new_string": "y"})
    assert result.is_error
    assert str(result.content).startswith("String to replace not found in file.")
    assert target.read_text() == "abc\n"


def test_edit_identical_strings(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("abc\n")
    result = call(Edit(), {"file_path": str(target), "old_string": "abc", "new_string": "abc"})
    assert result.is_error
    assert result.content == "No changes to make: old_string and new_string are exactly the same."


def test_edit_missing_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "missing.txt"
    result = call(Edit(), {"file_path": str(target), "old_string": "a", "new_string": "b"})
    assert result.is_error
    assert result.content == f"File does not exist: {target}"


def test_edit_with_empty_old_string_creates_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "made" / "new.txt"
    result = call(Edit(), {"file_path": str(target), "old_string": "", "new_string": "hi\n"})
    assert not result.is_error
    assert target.read_text() == "hi\n"


def test_edit_with_empty_old_string_refuses_nonempty_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "full.txt"
    target.write_text("content\n")
    result = call(Edit(), {"file_path": str(target), "old_string": "", "new_string": "x"})
    assert result.is_error
    assert target.read_text() == "content\n"


def test_edit_matches_lf_text_in_crlf_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "dos.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call(
        Edit(), {"file_path": str(target), "old_string": "one\ntwo", "new_string": "1\n2"}
    )
    assert not result.is_error, result.content
    assert target.read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_refuses_binary_file(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "b.bin"
    target.write_bytes(b"ab\x00cd")
    result = call(Edit(), {"file_path": str(target), "old_string": "ab", "new_string": "x"})
    assert result.is_error
    assert "binary" in str(result.content)


def test_read_before_edit_is_enforced_when_session_opts_in(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "guarded.txt"
    target.write_text("one\n")
    call.state["require_read_before_edit"] = True
    edit = {"file_path": str(target), "old_string": "one", "new_string": "two"}
    refused = call(Edit(), edit)
    assert refused.is_error
    assert "has not been read" in str(refused.content)
    call(Read(), {"file_path": str(target)})
    assert not call(Edit(), edit).is_error
    assert target.read_text() == "two\n"


def test_edit_metadata() -> None:
    assert Edit().kind == "edit"
    assert Write().kind == "edit"
    assert not Edit().is_read_only({})
    assert Write().target_paths({"file_path": "p"}) == ["p"]
