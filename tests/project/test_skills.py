"""Skill discovery: user, project and plugin roots, name rules, overrides, bad files, and
bodies left on disk until asked for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from wisp import diagnostics
from wisp.project import skills as skills_module
from wisp.project.skills import Skill, load_skills


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """What `wisp.diagnostics.warn` says during the test."""
    said: list[str] = []
    diagnostics.route_to(said.append)
    try:
        yield said
    finally:
        diagnostics.route_to(None)


def skill(root: Path, folder: str, header: str | None, body: str = "Do the thing.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = body if header is None else f"---\n{header}\n---\n{body}"
    path.write_text(text, encoding="utf-8")
    return path


def roots(tmp_path: Path, *plugins: str) -> list[tuple[str, Path, str | None]]:
    found: list[tuple[str, Path, str | None]] = [
        ("user", tmp_path / "config" / "skills", None),
        ("project", tmp_path / "repo" / ".claude" / "skills", None)]
    found += [("plugin", tmp_path / "plugins" / p / "skills", p) for p in plugins]
    return found


def test_user_project_and_plugin_skills_are_found(tmp_path: Path, warnings: list[str]) -> None:
    user, project, plug = (r[1] for r in roots(tmp_path, "myplug"))
    skill(user, "notes", "name: notes\ndescription: Keep meeting notes")
    skill(project, "pdf", "name: pdf\ndescription: Fill in PDF forms\nallowed-tools: Read, Bash")
    skill(plug, "pdf", "description: The plugin's PDF skill")
    found = load_skills(roots(tmp_path, "myplug"))
    assert list(found) == ["myplug:pdf", "notes", "pdf"]
    pdf = found["pdf"]
    assert (pdf.source, pdf.plugin, pdf.description) == ("project", None, "Fill in PDF forms")
    assert pdf.path == project / "pdf" / "SKILL.md" and pdf.folder == project / "pdf"
    assert pdf.allowed_tools == ("Read", "Bash")
    plugin = found["myplug:pdf"]
    assert (plugin.source, plugin.plugin) == ("plugin", "myplug")
    assert found["notes"].source == "user"
    assert warnings == []


def test_later_roots_override_earlier_ones(tmp_path: Path) -> None:
    user, project, _ = (r[1] for r in roots(tmp_path, "p"))
    skill(user, "review", "description: user's")
    skill(project, "review", "description: project's")
    found = load_skills(roots(tmp_path))
    assert found["review"].description == "project's"
    assert found["review"].source == "project"


def test_front_matter_name_wins_over_the_folder_name(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "some-folder", "name: tidy\ndescription: Tidy up")
    assert list(load_skills(roots(tmp_path))) == ["tidy"]


def test_an_invalid_name_falls_back_to_the_folder_name(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "fallback", "name: not a name (really)\ndescription: x")
    skill(user, "colon", "name: a:b\ndescription: x")
    assert list(load_skills(roots(tmp_path))) == ["colon", "fallback"]


def test_an_unusable_folder_name_without_a_name_is_skipped_with_a_warning(
        tmp_path: Path, warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "has space", "description: x")
    skill(user, "named", "name: fine\ndescription: x")
    assert list(load_skills(roots(tmp_path))) == ["fine"]
    assert len(warnings) == 1 and "has space" in warnings[0]


def test_folders_without_skill_md_and_stray_files_are_skipped_quietly(
        tmp_path: Path, warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    (user / "empty").mkdir(parents=True)
    (user / "README.md").write_text("not a skill")
    (user / ".hidden").mkdir()
    skill(user, ".hidden-skill", "description: hidden")
    skill(user, "real", "description: real")
    assert list(load_skills(roots(tmp_path))) == ["real"]
    assert warnings == []


def test_non_utf8_and_unreadable_skills_are_skipped_with_a_warning(
        tmp_path: Path, warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    latin = user / "latin" / "SKILL.md"
    latin.parent.mkdir(parents=True)
    latin.write_bytes("---\ndescription: caf\xe9\n---\nbody\n".encode("latin-1"))
    (user / "dir" / "SKILL.md").mkdir(parents=True)  # a folder where the file should be
    skill(user, "good", "description: fine")
    assert list(load_skills(roots(tmp_path))) == ["good"]
    assert len(warnings) == 2
    assert any("latin" in w and "UTF-8" in w for w in warnings)
    assert any(str(user / "dir" / "SKILL.md") in w for w in warnings)


def test_two_folders_claiming_one_name_keep_the_first(tmp_path: Path,
                                                      warnings: list[str]) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "a", "name: same\ndescription: first")
    skill(user, "b", "name: same\ndescription: second")
    assert load_skills(roots(tmp_path))["same"].description == "first"
    assert len(warnings) == 1 and "same" in warnings[0]


def test_description_falls_back_to_the_first_line_of_the_body(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "plain", None, body="# Format changelogs\n\nSteps...\n")
    assert load_skills(roots(tmp_path))["plain"].description == "Format changelogs"


def test_no_skill_folders_means_no_skills(tmp_path: Path) -> None:
    assert load_skills(roots(tmp_path, "p")) == {}


def test_the_body_is_not_kept_and_is_read_fresh(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    path = skill(user, "fresh", "description: x", body="old body\n")
    found = load_skills(roots(tmp_path))["fresh"]
    assert not any("old body" in str(getattr(found, slot)) for slot in Skill.__slots__)
    path.write_text("---\ndescription: x\n---\nnew body\n", encoding="utf-8")
    assert found.load_body() == "new body"


def test_a_long_body_is_not_read_at_load_time(tmp_path: Path, warnings: list[str]) -> None:
    # Past the head, bytes that are not UTF-8: reading (decoding) them at load time would
    # skip the skill with a warning. Only the call that wants the body meets them.
    user = roots(tmp_path)[0][1]
    path = skill(user, "big", "name: big\ndescription: A big one",
                 body="line of instructions\n" * 2_000)
    assert path.stat().st_size > skills_module._HEAD_BYTES
    with path.open("ab") as file:
        file.write(b"\xff\xfe not text\n")
    found = load_skills(roots(tmp_path))
    assert found["big"].description == "A big one"
    assert warnings == []
    with pytest.raises(OSError, match="UTF-8"):
        found["big"].load_body()


def test_a_header_longer_than_the_head_is_read_whole(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    filler = "\n".join(f"x{i}: {'y' * 60}" for i in range(300))  # ~20 KB of front matter
    skill(user, "long", f"{filler}\nname: long\ndescription: after the filler")
    found = load_skills(roots(tmp_path))["long"]
    assert found.description == "after the filler"


def test_describe_has_the_slash_command_shape(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    skill(user, "pdf", "description: Fill in PDF forms")
    assert load_skills(roots(tmp_path))["pdf"].describe() == {
        "name": "pdf", "description": "Fill in PDF forms", "argumentHint": ""}


def test_load_body_of_a_vanished_skill_raises_oserror(tmp_path: Path) -> None:
    user = roots(tmp_path)[0][1]
    path = skill(user, "gone", "description: x")
    found = load_skills(roots(tmp_path))["gone"]
    path.unlink()
    with pytest.raises(OSError):
        found.load_body()
