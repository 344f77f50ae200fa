"""`/memory` in the terminal UI, run in-process against a stand-in app: what it prints
with memory files loaded and without any."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from wisp.project.memory import load_memory
from wisp.tui.commands import BUILT_IN, CommandSet

ALL = ("user", "project", "local")


class FakeView:
    def __init__(self, out: list[str]) -> None:
        self.out = out

    def print_text(self, text: Any, style: str = "") -> None:
        self.out.append(str(text))


class FakeApp:
    """The few parts of `TuiApp` that `/memory` uses."""

    def __init__(self, project: Any) -> None:
        self.out: list[str] = []
        self.env = {"NO_COLOR": "1"}
        self.view = FakeView(self.out)
        self.runtime = SimpleNamespace(project=project)

    def print(self, ansi: str) -> None:
        self.out.append(ansi)

    def width(self) -> int:
        return 400  # wide enough that no path wraps

    def text(self) -> str:
        return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(self.out))


def run_memory(project: Any) -> str:
    app = FakeApp(project)
    asyncio.run(BUILT_IN["memory"][1](app, ""))  # type: ignore[arg-type]
    return app.text()


def project_of(cwd: Path, config: Path, sources: tuple[str, ...] = ALL) -> SimpleNamespace:
    return SimpleNamespace(cwd=cwd, config_dir=config, sources=sources,
                           memory=load_memory(cwd, config, sources))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_lists_each_loaded_file_with_kind_size_and_importer(tmp_path: Path) -> None:
    cwd, config = tmp_path / "repo", tmp_path / "config"
    (cwd / ".git").mkdir(parents=True)
    user = write(config / "CLAUDE.md", "u" * 1500)
    project = write(cwd / "CLAUDE.md", "see @docs/more.md")
    more = write(cwd / "docs" / "more.md", "more")
    local = write(cwd / "CLAUDE.local.md", "mine")
    text = run_memory(project_of(cwd, config))
    assert "4 memory file(s)" in text
    lines = text.split("\n")

    # Paths inside the project are shown relative to it, so the file name survives a
    # narrow terminal; others (the user's config folder here) in full.
    shown = {user: str(user), project: "CLAUDE.md", more: "docs/more.md",
             local: "CLAUDE.local.md"}

    def line_of(path: Path) -> str:
        [line] = [ln for ln in lines if ln.startswith(shown[path] + " ")]
        return line

    assert "user's private instructions" in line_of(user) and "1,500 chars" in line_of(user)
    assert "checked in" in line_of(project) and "17 chars" in line_of(project)
    assert line_of(more).rstrip().endswith("CLAUDE.md")
    assert "not checked in" in line_of(local)
    order = [lines.index(line_of(p)) for p in (user, project, more, local)]
    assert order == sorted(order)


def test_without_files_says_where_it_looks(tmp_path: Path) -> None:
    cwd, config = tmp_path / "repo" / "sub", tmp_path / "config"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    cwd.mkdir()
    text = run_memory(project_of(cwd, config))
    assert "No memory files are loaded" in text
    for path in (config / "CLAUDE.md", tmp_path / "repo" / "CLAUDE.md",
                 cwd / ".claude" / "CLAUDE.md", cwd / "CLAUDE.local.md"):
        assert str(path) in text


def test_without_sources_says_nothing_is_looked_for(tmp_path: Path) -> None:
    text = run_memory(project_of(tmp_path, tmp_path / "config", ()))
    assert "No memory files are loaded" in text and "no settings sources" in text


def test_listed_in_help_and_completion(tmp_path: Path) -> None:
    app = SimpleNamespace(config=SimpleNamespace(cwd=tmp_path),
                          env={"WISP_CONFIG_DIR": str(tmp_path / "config")})
    commands = CommandSet(app)  # type: ignore[arg-type]
    assert "memory" in commands.descriptions()
    assert "CLAUDE.md" in commands.descriptions()["memory"]
