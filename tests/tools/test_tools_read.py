from __future__ import annotations

import os
from pathlib import Path

from tests.tools.conftest import Caller
from wisp.tools.read import Read


def test_numbers_lines_like_cat_n(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    result = call(Read(), {"file_path": str(target)})
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert result.data == {
        "type": "text",
        "file": {
            "filePath": str(target),
            "content": "alpha\nbeta\ngamma",
            "numLines": 3,
            "startLine": 1,
            "totalLines": 3,
        },
    }


def test_offset_and_limit_select_a_window(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "many.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = call(Read(), {"file_path": str(target), "offset": 3, "limit": 2})
    assert result.content == "     3\tline 3\n     4\tline 4"
    assert result.data["file"]["numLines"] == 2
    assert result.data["file"]["startLine"] == 3
    assert result.data["file"]["totalLines"] == 10


def test_default_limit_is_2000_lines(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "long.txt"
    target.write_text("x\n" * 2500)
    result = call(Read(), {"file_path": str(target)})
    assert result.data["file"]["numLines"] == 2000
    assert result.data["file"]["totalLines"] == 2500


def test_relative_path_resolves_against_cwd(call: Caller, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("hi\n")
    result = call(Read(), {"file_path": "sub/f.txt"})
    assert result.content == "     1\thi"
    assert result.data["file"]["filePath"] == str(tmp_path / "sub" / "f.txt")


def test_missing_file_is_an_error_result(call: Caller, tmp_path: Path) -> None:
    result = call(Read(), {"file_path": str(tmp_path / "nope.txt")})
    assert result.is_error
    assert result.content == f"File does not exist: {tmp_path / 'nope.txt'}"


def test_directory_is_an_error_result(call: Caller, tmp_path: Path) -> None:
    result = call(Read(), {"file_path": str(tmp_path)})
    assert result.is_error
    assert "is a directory, not a file" in str(result.content)


def test_special_file_is_refused(call: Caller, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = call(Read(), {"file_path": str(fifo)})
    assert result.is_error
    assert "not a regular file" in str(result.content)


def test_binary_file_is_refused_clearly(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "blob.bin"
    target.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    result = call(Read(), {"file_path": str(target)})
    assert result.is_error
    assert "binary" in str(result.content)
    assert str(target) in str(result.content)


def test_empty_file_gets_a_note(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "empty.txt"
    target.write_text("")
    result = call(Read(), {"file_path": str(target)})
    assert not result.is_error
    assert "empty" in str(result.content)
    assert result.data["file"]["totalLines"] == 0


def test_offset_past_the_end_is_explained(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "short.txt"
    target.write_text("one\ntwo\n")
    result = call(Read(), {"file_path": str(target), "offset": 50})
    assert not result.is_error
    assert "2 lines" in str(result.content)


def test_long_lines_are_truncated(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "wide.txt"
    target.write_text("y" * 5000 + "\n")
    result = call(Read(), {"file_path": str(target)})
    line = str(result.content).split("\t", 1)[1]
    assert line.startswith("y" * 2000)
    assert "y" * 2001 not in line


def test_crlf_and_invalid_utf8_are_tolerated(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "dos.txt"
    target.write_bytes(b"one\r\ntw\xffo\r\n")
    result = call(Read(), {"file_path": str(target)})
    assert result.content == "     1\tone\n     2\ttw\ufffdo"


def test_read_is_recorded_in_session_state(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "seen.txt"
    target.write_text("x\n")
    call(Read(), {"file_path": str(target)})
    assert call.state["read_files"][str(target)] == target.stat().st_mtime


def test_missing_parameter_is_an_error_result(call: Caller) -> None:
    result = call(Read(), {})
    assert result.is_error
    assert "file_path" in str(result.content)


def test_metadata() -> None:
    tool = Read()
    assert tool.kind == "read"
    assert tool.is_read_only({"file_path": "x"})
    assert tool.target_paths({"file_path": "a/b"}) == ["a/b"]
