"""`/init`: the starter CLAUDE.md, derived from real project files in tmp_path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.privileges import IS_ROOT, open_folder, unprivileged
from wisp.tui.init_file import (
    MAX_FOLDERS,
    build_commands,
    layout,
    starter_memory,
    title,
    write_starter_memory,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def section(text: str, heading: str) -> list[str]:
    """The non-empty lines of one `## ` section."""
    lines = text.split("\n")
    start = lines.index(f"## {heading}") + 1
    body = []
    for line in lines[start:]:
        if line.startswith("## "):
            break
        if line:
            body.append(line)
    return body


def test_writes_the_file_once(tmp_path: Path) -> None:
    path, written = write_starter_memory(tmp_path)
    assert (path, written) == (tmp_path / "CLAUDE.md", True)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# {tmp_path.name}\n")
    assert text.endswith("\n")
    for heading in ("Build and test", "Layout", "Conventions"):
        assert f"\n## {heading}\n" in text
    assert write_starter_memory(tmp_path) == (path, False)


def test_an_existing_file_is_left_untouched(tmp_path: Path) -> None:
    mine = write(tmp_path / "CLAUDE.md", "my own notes")
    os.utime(mine, (1, 1))
    assert write_starter_memory(tmp_path) == (mine, False)
    assert mine.read_text() == "my own notes"
    assert mine.stat().st_mtime == 1


def test_a_dangling_symlink_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")
    assert write_starter_memory(tmp_path) == (tmp_path / "CLAUDE.md", False)
    assert not (tmp_path / "elsewhere.md").exists()


def test_the_content_is_deterministic(tmp_path: Path) -> None:
    """The layout is sorted case-insensitively (upper case first on a tie), whatever order
    the folders were made in and the file system lists them in."""
    names = ["mid", "b", "Zeta", "a", "B", "c", "Alpha", "y", "m"]
    texts = []
    for index, order in enumerate((names, names[::-1], sorted(names))):
        project = tmp_path / str(index) / "demo"
        write(project / "pyproject.toml", '[project]\nname = "demo"\n')
        for name in order:
            (project / name).mkdir()
        texts.append(starter_memory(project))
    assert section(texts[0], "Layout") == [f"- `{name}/`" for name in (
        "a", "Alpha", "B", "b", "c", "m", "mid", "y", "Zeta")]
    assert texts[0] == texts[1] == texts[2]


def test_a_python_project(tmp_path: Path) -> None:
    write(tmp_path / "README.md", "Intro text\n\n# Demo Tool #\n\nMore.\n# Second\n")
    write(tmp_path / "pyproject.toml", '[project]\nname = "demo-tool"\nversion = "1"\n')
    for folder in ("src", "tests", "docs", ".git", ".venv", "venv", "node_modules",
                   "__pycache__"):
        (tmp_path / folder).mkdir()
    env = tmp_path / "env"  # a virtualenv under another name
    write(env / "pyvenv.cfg", "home = /usr\n")
    write(tmp_path / "setup.py", "")  # files are not layout
    text = starter_memory(tmp_path)
    assert text.startswith("# Demo Tool\n")
    assert section(text, "Build and test") == [
        "- `python -m pytest` (tests; Python package `demo-tool`)"]
    assert section(text, "Layout") == ["- `docs/`", "- `src/`", "- `tests/`"]
    conventions = section(text, "Conventions")
    assert len(conventions) == 1 and "Add your project's conventions" in conventions[0]


def test_poetry_name_and_a_broken_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.poetry]\nname = "poet"\n')
    assert build_commands(tmp_path) == [
        ("python -m pytest", " (tests; Python package `poet`)")]
    write(tmp_path / "pyproject.toml", "[project\nname = ")
    assert build_commands(tmp_path) == [("python -m pytest", " (tests)")]


def test_package_json_scripts(tmp_path: Path) -> None:
    write(tmp_path / "package.json", json.dumps(
        {"name": "web", "scripts": {"lint": "eslint .", "dev": "vite", "test": "vitest",
                                    "build": "vite build"}}))
    assert [c for c, _ in build_commands(tmp_path)] == [
        "npm run test", "npm run build", "npm run lint"]


@pytest.mark.parametrize("text", ["{broken", "[]", '{"scripts": ["test"]}', '"x"', ""])
def test_malformed_package_json_gives_nothing(tmp_path: Path, text: str) -> None:
    write(tmp_path / "package.json", text)
    assert build_commands(tmp_path) == []


def test_makefile_targets(tmp_path: Path) -> None:
    write(tmp_path / "Makefile", (
        "test := not a target\n"
        ".PHONY: test build\n"
        "all build: deps\n"
        "\tcc -o x x.c\n"
        "testing:\n"
        "\tfalse\n"))
    assert [c for c, _ in build_commands(tmp_path)] == ["make build"]
    write(tmp_path / "Makefile", "test:\n\tpytest\nbuild :\n\tcc\n")
    assert [c for c, _ in build_commands(tmp_path)] == ["make test", "make build"]


def test_cargo_and_go(tmp_path: Path) -> None:
    write(tmp_path / "Cargo.toml", "not even toml [")
    write(tmp_path / "go.mod", "module x\n")
    assert [c for c, _ in build_commands(tmp_path)] == ["cargo test", "go test ./..."]


def test_every_manifest_together_in_a_fixed_order(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\n')
    write(tmp_path / "package.json", '{"scripts": {"test": "x"}}')
    write(tmp_path / "Makefile", "test:\n\ttrue\n")
    write(tmp_path / "Cargo.toml", "")
    write(tmp_path / "go.mod", "")
    assert [c for c, _ in build_commands(tmp_path)] == [
        "python -m pytest", "npm run test", "make test", "cargo test", "go test ./..."]


def test_nothing_detected_gives_placeholders(tmp_path: Path) -> None:
    text = starter_memory(tmp_path)
    assert len(section(text, "Build and test")) == 1
    assert "No build or test commands found" in section(text, "Build and test")[0]
    assert "No folders yet" in section(text, "Layout")[0]


def test_at_most_15_folders(tmp_path: Path) -> None:
    for i in range(20):
        (tmp_path / f"dir{i:02}").mkdir()
    listed = section(starter_memory(tmp_path), "Layout")
    folders = [line for line in listed if line.startswith("- `")]
    assert len(folders) == MAX_FOLDERS
    assert folders[0] == "- `dir00/`"
    assert listed[-1] == "- … and 5 more"


def test_title_falls_back_to_the_folder_name(tmp_path: Path) -> None:
    project = tmp_path / "my-project"
    project.mkdir()
    assert title(project) == "my-project"
    write(project / "README.md", "## Only a subheading\n#NoSpace\n```sh\n# a comment\n```\n")
    assert title(project) == "my-project"
    write(project / "README.md", "```\n# in a fence\n```\n# Real Title\n")
    assert title(project) == "Real Title"
    write(project / "README.md", "\ufeff# With BOM\n")
    assert title(project) == "With BOM"


def test_unreadable_and_malformed_files_never_raise(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_bytes(b"\xff\xfe# not utf-8")
    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe")
    (tmp_path / "package.json").mkdir()  # a folder where a file was expected
    (tmp_path / "Makefile").symlink_to(tmp_path / "missing")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    path, written = write_starter_memory(tmp_path)
    assert written
    text = path.read_text()
    assert text.startswith(f"# {tmp_path.name}\n")
    # The undecodable pyproject still marks a Python project: pytest, without a name.
    assert section(text, "Build and test") == ["- `python -m pytest` (tests)"]


def test_a_file_without_read_permission_is_ignored() -> None:
    """Run as a user the file's mode binds (as root, a forked child that dropped to
    nobody), in a folder that user can enter."""
    with open_folder() as root:
        secret = write(root / "package.json", '{"scripts": {"test": "x"}}')
        secret.chmod(0)
        assert unprivileged(lambda: build_commands(root)) == []


@pytest.mark.skipif(not IS_ROOT, reason="only root reads a file whatever its mode")
def test_root_reads_a_file_whatever_its_mode(tmp_path: Path) -> None:
    write(tmp_path / "package.json", '{"scripts": {"test": "x"}}').chmod(0)
    assert [c for c, _ in build_commands(tmp_path)] == ["npm run test"]


def test_layout_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert layout(tmp_path / "missing") == []


def test_an_unwritable_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_starter_memory(tmp_path / "missing")
