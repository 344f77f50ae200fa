"""The Skill tool: what the model is told, what a call returns, and how permission rules
judge it through the real permission engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import Caller
from wisp.permissions.engine import PermissionPolicy, evaluate
from wisp.permissions.modes import PermissionMode
from wisp.project.skills import Skill, load_skills
from wisp.rules import Rule
from wisp.tools.skill import MAX_LISTED_FILES, SkillTool


def make_skill(root: Path, folder: str, header: str, body: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{header}\n---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_skill(root, "pdf", "name: pdf\ndescription: Fill in PDF forms",
               "Run scripts/fill.py on the form.\n")
    (root / "pdf" / "scripts").mkdir()
    (root / "pdf" / "scripts" / "fill.py").write_text("print('fill')\n")
    (root / "pdf" / "reference.md").write_text("# Fields\n")
    (root / "pdf" / ".cache").mkdir()
    (root / "pdf" / ".cache" / "junk").write_text("x")
    make_skill(root, "notes", "description: Keep meeting notes", "Write notes.\n")
    return root


@pytest.fixture
def tool(skills_root: Path) -> SkillTool:
    found = load_skills([("project", skills_root, None)])
    return SkillTool(lambda: found)


def test_description_lists_names_and_descriptions_but_no_bodies(tool: SkillTool) -> None:
    definition = tool.api_definition()
    assert definition["name"] == "Skill"
    assert "- notes: Keep meeting notes\n- pdf: Fill in PDF forms" in definition["description"]
    assert "scripts/fill.py" not in definition["description"]
    assert definition["input_schema"]["required"] == ["skill"]
    assert set(definition["input_schema"]["properties"]) == {"skill", "args"}


def test_long_descriptions_are_cut_and_braces_survive(tmp_path: Path) -> None:
    make_skill(tmp_path, "wordy", "description: " + "{x} " * 200, "b")
    found = load_skills([("user", tmp_path, None)])
    line = SkillTool(lambda: found).api_definition()["description"].splitlines()[-1]
    assert line.startswith("- wordy: {x} {x}") and line.endswith("…")
    assert len(line) < 300


def test_a_call_returns_folder_files_body_and_args(tool: SkillTool, skills_root: Path,
                                                   call: Caller) -> None:
    result = call(tool, {"skill": "pdf", "args": "form.pdf"})
    assert not result.is_error
    text = str(result.content)
    first = text.splitlines()[0]
    assert str(skills_root / "pdf") in first
    assert "- reference.md\n- scripts/fill.py" in text
    assert "SKILL.md" not in text and ".cache" not in text
    assert "Run scripts/fill.py on the form." in text
    assert text.endswith("Arguments: form.pdf")
    assert "name: pdf" not in text  # the front matter is not part of the body
    assert result.data == {"success": True, "commandName": "pdf"}


def test_without_args_nothing_is_appended(tool: SkillTool, call: Caller) -> None:
    text = str(call(tool, {"skill": "notes"}).content)
    assert text.endswith("Write notes.")
    assert "Other files" not in text  # the folder holds only SKILL.md


def test_the_body_is_read_at_call_time(tool: SkillTool, skills_root: Path,
                                       call: Caller) -> None:
    make_skill(skills_root, "notes", "description: Keep meeting notes", "Changed body.\n")
    assert "Changed body." in str(call(tool, {"skill": "notes"}).content)


def test_a_reload_changes_what_the_next_call_sees(skills_root: Path, tmp_path: Path,
                                                  call: Caller) -> None:
    current: dict[str, Skill] = load_skills([("project", skills_root, None)])
    tool = SkillTool(lambda: current)
    assert call(tool, {"skill": "fresh"}).is_error
    make_skill(skills_root, "fresh", "description: New", "New skill.\n")
    current = load_skills([("project", skills_root, None)])
    assert "New skill." in str(call(tool, {"skill": "fresh"}).content)
    assert "- fresh: New" in tool.api_definition()["description"]


def test_unknown_skill_lists_the_valid_names(tool: SkillTool, call: Caller) -> None:
    result = call(tool, {"skill": "nope"})
    assert result.is_error
    assert "'nope'" in str(result.content) and "notes, pdf" in str(result.content)


def test_a_leading_slash_is_accepted(tool: SkillTool, call: Caller) -> None:
    assert not call(tool, {"skill": "/pdf"}).is_error


def test_missing_or_mistyped_input_is_an_error(tool: SkillTool, call: Caller) -> None:
    assert call(tool, {}).is_error
    assert call(tool, {"skill": 3}).is_error


def test_a_skill_removed_from_disk_is_an_error(tool: SkillTool, skills_root: Path,
                                               call: Caller) -> None:
    (skills_root / "notes" / "SKILL.md").unlink()
    result = call(tool, {"skill": "notes"})
    assert result.is_error and "notes" in str(result.content)


def test_the_file_list_is_capped(tmp_path: Path, call: Caller) -> None:
    make_skill(tmp_path, "many", "description: many", "body")
    for i in range(MAX_LISTED_FILES + 10):
        (tmp_path / "many" / f"f{i:03}.txt").write_text("")
    found = load_skills([("user", tmp_path, None)])
    text = str(call(SkillTool(lambda: found), {"skill": "many"}).content)
    assert f"f{MAX_LISTED_FILES - 1:03}.txt" in text
    assert f"f{MAX_LISTED_FILES:03}.txt" not in text
    assert "and more" in text


def test_namespaced_plugin_skills_are_called_by_full_name(tmp_path: Path,
                                                          call: Caller) -> None:
    make_skill(tmp_path / "plug", "pdf", "description: plugin pdf", "Plugin body.")
    found = load_skills([("plugin", tmp_path / "plug", "myplug")])
    tool = SkillTool(lambda: found)
    assert "- myplug:pdf: plugin pdf" in tool.api_definition()["description"]
    assert "Plugin body." in str(call(tool, {"skill": "myplug:pdf"}).content)


# ---- permissions ------------------------------------------------------------------------


def judge(tool: SkillTool, tmp_path: Path, skill: str, mode: PermissionMode = "default",
          **rules: list[str]) -> str:
    policy = PermissionPolicy(mode=mode, cwd=tmp_path,
                              **{k: [Rule.parse(r) for r in v] for k, v in rules.items()})
    return evaluate(tool, {"skill": skill}, policy).behavior


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "acceptEdits"])
def test_loading_a_skill_never_prompts_without_rules(tool: SkillTool, tmp_path: Path,
                                                     mode: PermissionMode) -> None:
    assert judge(tool, tmp_path, "pdf", mode) == "allow"


@pytest.mark.parametrize(("rule", "skill", "denied"), [
    ("Skill", "pdf", True),
    ("Skill(pdf)", "pdf", True),
    ("Skill(pdf)", "/pdf", True),
    ("Skill(/pdf)", "pdf", True),
    ("Skill(pdf)", "notes", False),
    ("Skill(pd)", "pdf", False),
    ("Skill(pd:*)", "pdf", True),
    ("Skill(myplug:*)", "myplug:pdf", True),
    ("Skill(myplug:*)", "pdf", False),
    ("Read(./**)", "pdf", False),
])
def test_deny_rules(tool: SkillTool, tmp_path: Path, rule: str, skill: str,
                    denied: bool) -> None:
    assert (judge(tool, tmp_path, skill, deny=[rule]) == "deny") is denied


def test_deny_holds_in_bypass_mode(tool: SkillTool, tmp_path: Path) -> None:
    assert judge(tool, tmp_path, "pdf", "bypassPermissions", deny=["Skill(pdf)"]) == "deny"


def test_ask_rules_ask(tool: SkillTool, tmp_path: Path) -> None:
    assert judge(tool, tmp_path, "pdf", ask=["Skill(pdf)"]) == "ask"
    assert judge(tool, tmp_path, "notes", ask=["Skill(pdf)"]) == "allow"
    assert judge(tool, tmp_path, "pdf", ask=["Skill"]) == "ask"


def test_allow_rules_allow_and_deny_beats_them(tool: SkillTool, tmp_path: Path) -> None:
    assert judge(tool, tmp_path, "pdf", allow=["Skill(pdf)"]) == "allow"
    assert judge(tool, tmp_path, "pdf", allow=["Skill(pdf)"], deny=["Skill"]) == "deny"
    assert judge(tool, tmp_path, "pdf", allow=["Skill"], deny=["Skill(pdf)"]) == "deny"


def test_a_denied_call_is_refused_before_the_tool_runs(tool: SkillTool,
                                                       tmp_path: Path) -> None:
    policy = PermissionPolicy(cwd=tmp_path, deny=[Rule.parse("Skill(pdf)")])
    verdict = evaluate(tool, {"skill": "pdf"}, policy)
    assert verdict.behavior == "deny" and verdict.rule == "Skill(pdf)"
    assert "Skill" in verdict.message
