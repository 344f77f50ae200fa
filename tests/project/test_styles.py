"""Output styles: built-ins, files, precedence, lookup by name, which setting wins, and
how a style shapes the system prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from wisp import diagnostics
from wisp.project.styles import OutputStyle, builtin_styles, load_styles, resolve_style
from wisp.prompts.system import (
    GUIDANCE,
    IDENTITY,
    STYLE_GUIDANCE,
    environment_section,
    system_blocks,
)
from wisp.settings.loader import load_settings


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    said: list[str] = []
    diagnostics.route_to(said.append)
    try:
        yield said
    finally:
        diagnostics.route_to(None)


def style_file(folder: Path, filename: str, header: str | None, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(body if header is None else f"---\n{header}\n---\n{body}",
                    encoding="utf-8")
    return path


def roots(tmp_path: Path, *plugins: str) -> list[tuple[str, Path, str | None]]:
    found: list[tuple[str, Path, str | None]] = [
        ("user", tmp_path / "config" / "output-styles", None),
        ("project", tmp_path / "repo" / ".claude" / "output-styles", None)]
    found += [("plugin", tmp_path / "plugins" / p / "output-styles", p) for p in plugins]
    return found


# ---- loading ----------------------------------------------------------------------------


def test_builtins_are_there_without_files(tmp_path: Path) -> None:
    styles = load_styles(roots(tmp_path))
    assert list(styles) == ["default", "explanatory", "learning", "concise"]
    assert styles["default"].is_default and styles["default"].instructions == ""
    for key in ("explanatory", "learning", "concise"):
        style = styles[key]
        assert style.source == "builtin" and style.instructions and style.description
        assert not style.is_default


def test_files_are_read_with_their_front_matter(tmp_path: Path, warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    style_file(user, "pirate.md", "name: Pirate\ndescription: Talks like a pirate\n"
               "keep-coding-instructions: true", "Speak like a pirate.\n")
    style_file(user, "tutor.md", "description: Teaches", "Teach patiently.\n")
    style_file(user, "notes.txt", None, "not a style")
    styles = load_styles(roots(tmp_path))
    pirate = styles["pirate"]
    assert (pirate.name, pirate.description, pirate.instructions) == (
        "Pirate", "Talks like a pirate", "Speak like a pirate.")
    assert pirate.keep_coding_instructions and pirate.source == "user"
    assert pirate.path == user / "pirate.md"
    tutor = styles["tutor"]
    assert tutor.name == "tutor" and not tutor.keep_coding_instructions  # the default: no
    assert "notes" not in styles
    assert warnings == []


def test_project_overrides_user_overrides_builtin(tmp_path: Path) -> None:
    user, project = roots(tmp_path)[0][1], roots(tmp_path)[1][1]
    style_file(user, "a.md", "name: Concise", "user concise")
    style_file(user, "b.md", "name: Mine", "user mine")
    style_file(project, "c.md", "name: mine", "project mine")
    styles = load_styles(roots(tmp_path))
    assert styles["concise"].instructions == "user concise"
    assert (styles["mine"].instructions, styles["mine"].source) == ("project mine", "project")


def test_default_is_reserved(tmp_path: Path, warnings: list[str]) -> None:
    project = roots(tmp_path)[1][1]
    style_file(project, "default.md", None, "Be someone else.")
    style_file(project, "x.md", "name: DEFAULT", "Be someone else.")
    styles = load_styles(roots(tmp_path))
    assert styles["default"].source == "builtin"
    assert len(warnings) == 2 and all("reserved" in w for w in warnings)


def test_plugin_styles_are_namespaced(tmp_path: Path) -> None:
    style_file(roots(tmp_path, "deck")[2][1], "slides.md", "description: d", "Slides.")
    styles = load_styles(roots(tmp_path, "deck"))
    assert styles["deck:slides"].name == "deck:slides"
    assert styles["deck:slides"].source == "plugin"


def test_unreadable_files_are_skipped_with_a_warning(tmp_path: Path,
                                                     warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    user.mkdir(parents=True)
    (user / "bad.md").write_bytes(b"caf\xe9")
    (user / "folder.md").mkdir()
    assert "bad" not in load_styles(roots(tmp_path))
    assert len(warnings) == 1 and "bad.md" in warnings[0]


# ---- resolving --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Explanatory", "explanatory", "EXPLANATORY", " explanatory "])
def test_names_match_in_any_case(name: str) -> None:
    style, warning = resolve_style(name, builtin_styles())
    assert style.name == "Explanatory" and warning is None


@pytest.mark.parametrize("name", [None, "", "default", "Default"])
def test_no_name_or_default_is_the_default(name: str | None) -> None:
    style, warning = resolve_style(name, builtin_styles())
    assert style.is_default and warning is None


def test_unknown_name_falls_back_with_a_warning(tmp_path: Path) -> None:
    style_file(roots(tmp_path)[0][1], "mine.md", None, "x")
    style, warning = resolve_style("Fancy", load_styles(roots(tmp_path)))
    assert style.is_default
    assert warning is not None and "'Fancy'" in warning
    for name in ("default", "Explanatory", "Learning", "Concise", "mine"):
        assert name in warning


# ---- which setting wins -----------------------------------------------------------------


def test_local_settings_style_wins_over_project_and_user(tmp_path: Path) -> None:
    config, repo = tmp_path / "config", tmp_path / "repo"
    files = {config / "settings.json": "User",
             repo / ".claude" / "settings.json": "Project",
             repo / ".claude" / "settings.local.json": "Local"}
    for path, value in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"outputStyle": value}))
    env = {"WISP_CONFIG_DIR": str(config)}

    def chosen() -> object:
        return load_settings(repo, env, selected=None, flag=None).scalar("outputStyle")

    assert chosen() == "Local"
    (repo / ".claude" / "settings.local.json").unlink()
    assert chosen() == "Project"
    (repo / ".claude" / "settings.json").unlink()
    assert chosen() == "User"


# ---- the system prompt ------------------------------------------------------------------


def old_default_text(cwd: Path) -> str:
    """What system_blocks produced before styles existed."""
    return f"{IDENTITY}\n\n{GUIDANCE}\n\n{environment_section(cwd)}"


def block_text(blocks: list[dict[str, object]]) -> str:
    assert len(blocks) == 1 and blocks[0]["cache_control"] == {"type": "ephemeral"}
    return str(blocks[0]["text"])


def test_the_default_style_changes_nothing(tmp_path: Path) -> None:
    default = builtin_styles()["default"]
    for custom, append in [(None, None), (None, "more"), ("", None), ("X", "more"), ("", "")]:
        before = system_blocks(tmp_path, custom, append)
        assert system_blocks(tmp_path, custom, append, default) == before
        assert system_blocks(tmp_path, custom, append, None) == before
    assert block_text(system_blocks(tmp_path, None, None)) == old_default_text(tmp_path)
    assert block_text(system_blocks(tmp_path, None, "more")) == (
        old_default_text(tmp_path) + "\n\nmore")
    assert system_blocks(tmp_path, "", None) == []


def test_a_style_that_keeps_coding_instructions(tmp_path: Path) -> None:
    style = builtin_styles()["explanatory"]
    text = block_text(system_blocks(tmp_path, None, "APPENDED", style))
    assert text.startswith(old_default_text(tmp_path))
    assert f"# Output style: Explanatory\n\n{style.instructions}" in text
    assert text.endswith("\n\nAPPENDED")


def test_a_style_that_drops_coding_instructions(tmp_path: Path) -> None:
    style = OutputStyle("Poet", "verse", "Answer in verse.")
    text = block_text(system_blocks(tmp_path, None, None, style))
    assert GUIDANCE not in text
    assert text == (f"{IDENTITY}\n\n{STYLE_GUIDANCE}\n\n{environment_section(tmp_path)}"
                    "\n\n# Output style: Poet\n\nAnswer in verse.")


def test_a_style_joins_an_empty_custom_prompt(tmp_path: Path) -> None:
    style = OutputStyle("Poet", "verse", "Answer in verse.")
    assert block_text(system_blocks(tmp_path, "", None, style)) == (
        "# Output style: Poet\n\nAnswer in verse.")
    assert block_text(system_blocks(tmp_path, "", "after", style)) == (
        "# Output style: Poet\n\nAnswer in verse.\n\nafter")


def test_a_style_follows_a_custom_prompt(tmp_path: Path) -> None:
    style = builtin_styles()["concise"]
    text = block_text(system_blocks(tmp_path, "X", "Y", style))
    assert text == f"X\n\n# Output style: Concise\n\n{style.instructions}\n\nY"
    assert IDENTITY not in text and GUIDANCE not in text
