from __future__ import annotations

import os
from pathlib import Path

from tests.tools.conftest import Caller
from wisp.globmatch import GlobMatcher, expand_braces
from wisp.tools.glob import Glob


def make(root: Path, rel: str, mtime: float = 1_000_000.0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rel)
    os.utime(path, (mtime, mtime))
    return path


def test_recursive_pattern_newest_first(call: Caller, tmp_path: Path) -> None:
    old = make(tmp_path, "a.py", 1_000)
    mid = make(tmp_path, "pkg/b.py", 2_000)
    new = make(tmp_path, "pkg/deep/c.py", 3_000)
    make(tmp_path, "pkg/readme.md", 4_000)
    result = call(Glob(), {"pattern": "**/*.py"})
    assert not result.is_error
    assert result.content == "\n".join(str(p) for p in (new, mid, old))
    assert result.data["filenames"] == [str(new), str(mid), str(old)]
    assert result.data["numFiles"] == 3
    assert result.data["truncated"] is False


def test_single_star_stays_in_one_directory(call: Caller, tmp_path: Path) -> None:
    top = make(tmp_path, "top.py")
    make(tmp_path, "sub/inner.py")
    result = call(Glob(), {"pattern": "*.py"})
    assert result.content == str(top)


def test_braces_and_path_argument(call: Caller, tmp_path: Path) -> None:
    ts = make(tmp_path, "src/app/x.ts", 2_000)
    tsx = make(tmp_path, "src/app/y.tsx", 1_000)
    make(tmp_path, "src/app/z.js")
    result = call(Glob(), {"pattern": "**/*.{ts,tsx}", "path": "src"})
    assert result.data["filenames"] == [str(ts), str(tsx)]


def test_no_match(call: Caller, tmp_path: Path) -> None:
    make(tmp_path, "a.txt")
    result = call(Glob(), {"pattern": "**/*.rs"})
    assert not result.is_error
    assert result.content == "No files found"


def test_skips_git_and_node_modules(call: Caller, tmp_path: Path) -> None:
    keep = make(tmp_path, "lib/index.js")
    make(tmp_path, "node_modules/dep/index.js")
    make(tmp_path, ".git/hooks/x.js")
    result = call(Glob(), {"pattern": "**/*.js"})
    assert result.data["filenames"] == [str(keep)]


def test_results_capped_at_100(call: Caller, tmp_path: Path) -> None:
    for i in range(130):
        make(tmp_path, f"f{i:03}.txt", 1_000 + i)
    result = call(Glob(), {"pattern": "*.txt"})
    assert result.data["numFiles"] == 100
    assert result.data["truncated"] is True
    lines = str(result.content).splitlines()
    assert lines[0] == str(tmp_path / "f129.txt")
    assert "130" in lines[-1]


def test_absolute_pattern(call: Caller, tmp_path: Path) -> None:
    target = make(tmp_path, "x/y.cfg")
    result = call(Glob(), {"pattern": f"{tmp_path}/**/*.cfg"}, cwd=Path("/"))
    assert result.data["filenames"] == [str(target)]


def test_missing_directory_is_an_error(call: Caller, tmp_path: Path) -> None:
    result = call(Glob(), {"pattern": "*", "path": str(tmp_path / "nope")})
    assert result.is_error
    assert "does not exist" in str(result.content)


def test_glob_matcher_semantics() -> None:
    assert expand_braces("a.{x,y{1,2}}") == ["a.x", "a.y1", "a.y2"]
    assert expand_braces("{solo}") == ["{solo}"]
    m = GlobMatcher("src/**/*.py")
    assert m.match("src/a.py")
    assert m.match("src/x/y/a.py")
    assert not m.match("lib/a.py")
    assert not GlobMatcher("*.py").match("dir/a.py")
    assert GlobMatcher("file[0-9].txt").match("file7.txt")
    assert not GlobMatcher("file[!0-9].txt").match("file7.txt")
    assert GlobMatcher("?.md").match("a.md")
    assert GlobMatcher("src/*.py").literal_prefix() == "src"
    assert GlobMatcher("*.py").max_depth() == 1
    assert GlobMatcher("**/x").max_depth() is None


def test_metadata() -> None:
    assert Glob().kind == "read"
    assert Glob().is_read_only({"pattern": "*"})
    assert Glob().target_paths({"pattern": "*"}) == ["."]
    assert Glob().target_paths({"pattern": "*", "path": "/x"}) == ["/x"]
