from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import Caller
from wisp.tools._grep_rg import ripgrep_argv
from wisp.tools._grep_search import Query
from wisp.tools.grep import Grep


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    print('Hello')\n    return 0\n",
        "src/util.py": "def helper():\n    return 'hello world'\n",
        "docs/readme.md": "Say HELLO to the docs\n",
        "node_modules/dep/index.js": "hello from a dependency\n",
        ".git/config": "hello git\n",
    }
    for i, (rel, text) in enumerate(files.items()):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000 + i, 1_000 + i))
    (tmp_path / "blob.bin").write_bytes(b"hello\x00\x01\x02")
    return tmp_path


@pytest.fixture
def fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wisp.tools.grep.ripgrep", lambda: None)


@pytest.mark.usefixtures("fallback")
def test_files_with_matches_is_default(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "hello"})
    assert not result.is_error
    assert result.content == f"Found 1 file\n{tree / 'src/util.py'}"
    assert result.data["mode"] == "files_with_matches"
    assert result.data["filenames"] == [str(tree / "src/util.py")]


@pytest.mark.usefixtures("fallback")
def test_case_insensitive_newest_first(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "hello", "-i": True})
    assert result.data["filenames"] == [
        str(tree / "docs/readme.md"),
        str(tree / "src/util.py"),
        str(tree / "src/app.py"),
    ]
    assert str(result.content).startswith("Found 3 files\n")


@pytest.mark.usefixtures("fallback")
def test_content_mode_with_line_numbers(call: Caller, tree: Path) -> None:
    result = call(
        Grep(), {"pattern": "return", "output_mode": "content", "-n": True, "path": "src"}
    )
    assert str(result.content).splitlines() == [
        f"{tree / 'src/app.py'}:5:    return 0",
        f"{tree / 'src/util.py'}:2:    return 'hello world'",
    ]
    assert result.data["numLines"] == 2


@pytest.mark.usefixtures("fallback")
def test_content_mode_without_line_numbers_on_one_file(call: Caller, tree: Path) -> None:
    result = call(
        Grep(),
        {"pattern": "def", "output_mode": "content", "-n": False, "path": "src/app.py"},
    )
    assert result.content == "def main():"


@pytest.mark.usefixtures("fallback")
def test_context_lines(call: Caller, tree: Path) -> None:
    result = call(
        Grep(),
        {"pattern": "print|return", "output_mode": "content", "-C": 1, "path": "src/app.py"},
    )
    assert str(result.content).splitlines() == [
        "3-def main():",
        "4:    print('Hello')",
        "5:    return 0",
    ]
    result = call(
        Grep(), {"pattern": "import|return", "output_mode": "content", "-A": 1, "path": "src"}
    )
    app = tree / "src/app.py"
    assert str(result.content).splitlines()[:4] == [
        f"{app}:1:import os",
        f"{app}-2-",
        "--",
        f"{app}:5:    return 0",
    ]


@pytest.mark.usefixtures("fallback")
def test_glob_filter(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "hello", "-i": True, "glob": "*.md"})
    assert result.data["filenames"] == [str(tree / "docs/readme.md")]
    result = call(Grep(), {"pattern": "hello", "-i": True, "glob": "src/**/*.{py,pyi}"})
    assert sorted(result.data["filenames"]) == [str(tree / "src/app.py"), str(tree / "src/util.py")]
    result = call(Grep(), {"pattern": "hello", "-i": True, "glob": "!*.md"})
    assert str(tree / "docs/readme.md") not in result.data["filenames"]


@pytest.mark.usefixtures("fallback")
def test_type_filter(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "hello", "-i": True, "type": "md"})
    assert result.data["filenames"] == [str(tree / "docs/readme.md")]


@pytest.mark.usefixtures("fallback")
def test_count_mode(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "return|def", "output_mode": "count", "path": "src"})
    lines = str(result.content).splitlines()
    assert f"{tree / 'src/app.py'}:2" in lines
    assert f"{tree / 'src/util.py'}:2" in lines
    assert result.data["numMatches"] == 4
    assert "Found 4 total matching lines across 2 files." in str(result.content)


@pytest.mark.usefixtures("fallback")
def test_head_limit(call: Caller, tree: Path) -> None:
    result = call(
        Grep(), {"pattern": ".", "output_mode": "content", "path": "src", "head_limit": 2}
    )
    lines = str(result.content).splitlines()
    assert len([line for line in lines if line.startswith(str(tree))]) == 2
    assert "Showing 2 of" in str(result.content)


@pytest.mark.usefixtures("fallback")
def test_multiline(call: Caller, tree: Path) -> None:
    single = call(Grep(), {"pattern": r"main\(\):\n\s+print", "path": "src"})
    assert single.content == "No files found"
    multi = call(
        Grep(),
        {
            "pattern": r"main\(\):.*print",
            "path": "src",
            "multiline": True,
            "output_mode": "content",
        },
    )
    assert str(multi.content).splitlines() == [
        f"{tree / 'src/app.py'}:3:def main():",
        f"{tree / 'src/app.py'}:4:    print('Hello')",
    ]


@pytest.mark.usefixtures("fallback")
def test_skips_binary_vcs_and_dependencies(call: Caller, tree: Path) -> None:
    result = call(Grep(), {"pattern": "hello", "-i": True})
    found = " ".join(result.data["filenames"])
    assert "blob.bin" not in found
    assert ".git" not in found
    assert "node_modules" not in found


@pytest.mark.usefixtures("fallback")
def test_errors_are_results(call: Caller, tree: Path) -> None:
    bad = call(Grep(), {"pattern": "(unclosed"})
    assert bad.is_error
    assert "Invalid regular expression" in str(bad.content)
    missing = call(Grep(), {"pattern": "x", "path": "nope"})
    assert missing.is_error
    mode = call(Grep(), {"pattern": "x", "output_mode": "lines"})
    assert mode.is_error


def test_ripgrep_argv_shape(tmp_path: Path) -> None:
    argv = ripgrep_argv(
        "rg",
        Query(pattern="-x", root=tmp_path, mode="content", ignore_case=True, before=2, glob="*.py"),
    )
    assert argv[-4:] == ["--regexp", "-x", "--", str(tmp_path)]
    assert "--ignore-case" in argv
    assert argv[argv.index("--before-context") + 1] == "2"
    assert "*.py" in argv


@pytest.mark.usefixtures("rg")
def test_ripgrep_engine_agrees_with_fallback(
    call: Caller, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nested and later-sorting files check that both engines list files in the same order.
    (tree / "src/pkg").mkdir()
    (tree / "src/pkg/inner.py").write_text("def inner():\n    return 5\n")
    (tree / "src/zz.py").write_text("x = 1\nreturn_value = 9\n")
    queries = [
        {"pattern": "hello", "-i": True},
        {"pattern": "return", "output_mode": "content", "path": "src"},
        {"pattern": "return|def", "output_mode": "count", "path": "src"},
        {"pattern": "hello", "-i": True, "glob": "*.md"},
        {"pattern": "hello", "-i": True, "glob": "src/**/*.{py,pyi}"},
        {"pattern": "hello", "-i": True, "type": "md"},
        {"pattern": "print|return", "output_mode": "content", "-C": 1, "path": "src/app.py"},
        {"pattern": "import|return", "output_mode": "content", "-A": 1, "path": "src"},
        {"pattern": "def", "output_mode": "content", "-n": False, "path": "src/app.py"},
        {"pattern": r"main\(\):.*print", "path": "src", "multiline": True},
        {
            "pattern": r"main\(\):.*print",
            "path": "src",
            "multiline": True,
            "output_mode": "content",
        },
        {"pattern": ".", "output_mode": "content", "path": "src", "head_limit": 2},
    ]
    with_rg = [call(Grep(), q) for q in queries]
    monkeypatch.setattr("wisp.tools.grep.ripgrep", lambda: None)
    without = [call(Grep(), q) for q in queries]
    for query, a, b in zip(queries, with_rg, without, strict=True):
        assert not a.is_error, (query, a.content)
        assert a.content == b.content, query


def test_metadata() -> None:
    assert Grep().kind == "read"
    assert Grep().is_read_only({"pattern": "x"})
    assert Grep().target_paths({"pattern": "x", "path": "src"}) == ["src"]
