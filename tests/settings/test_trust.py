"""The trust record (`wisp.settings.trust`): where it lives, what it trusts, how it is
written; and what an untrusted folder's settings keep (`wisp.settings.untrusted`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wisp.settings.loader import load_settings
from wisp.settings.trust import (
    config_file,
    imports_decision,
    is_trusted,
    project_root,
    record,
)
from wisp.settings.untrusted import held_back_note


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_the_config_file_follows_the_config_dir_variables_as_the_reference_does(
        tmp_path: Path, home: Path) -> None:
    assert config_file({"HOME": str(home)}) == home / ".claude.json"
    assert config_file({"HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "c")}) == (
        tmp_path / "c" / ".claude.json")
    assert config_file({"HOME": str(home), "WISP_CONFIG_DIR": str(tmp_path / "w")}) == (
        tmp_path / "w" / ".claude.json")
    both = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "c"),
            "WISP_CONFIG_DIR": str(tmp_path / "w")}
    assert config_file(both) == tmp_path / "c" / ".claude.json"


def test_a_record_trusts_its_folder_and_those_below_but_home_and_root_only_themselves(
        tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home)}
    work, child = tmp_path / "work", tmp_path / "work" / "a" / "b"
    child.mkdir(parents=True)
    assert not is_trusted(work, env)
    record(work, env, hasTrustDialogAccepted=True)
    assert is_trusted(work, env) and is_trusted(child, env)
    assert not is_trusted(tmp_path, env)
    record(home, env, hasTrustDialogAccepted=True)
    (home / "clone").mkdir()
    assert is_trusted(home, env) and not is_trusted(home / "clone", env)
    root_env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    record(Path("/"), root_env, hasTrustDialogAccepted=True)
    assert is_trusted(Path("/"), root_env) and not is_trusted(work, root_env)


def test_a_repository_is_one_project(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home)}
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert project_root(repo / "src" / "deep") == repo
    record(repo / "src" / "deep", env, hasTrustDialogAccepted=True)
    assert list(json.loads(config_file(env).read_text())["projects"]) == [str(repo)]
    assert is_trusted(repo, env) and is_trusted(repo / "src", env)


def test_only_true_trusts_and_the_variable_vouches_for_any_folder(tmp_path: Path,
                                                                  home: Path) -> None:
    env = {"HOME": str(home)}
    config_file(env).write_text(json.dumps({"projects": {
        str(tmp_path): {"hasTrustDialogAccepted": "yes"}}}))
    assert not is_trusted(tmp_path, env)
    for value in ("1", "true", "yes"):
        assert is_trusted(tmp_path, {**env, "WISP_TRUST_PROJECT": value})
    assert not is_trusted(tmp_path, {**env, "WISP_TRUST_PROJECT": "0"})


def test_recording_keeps_everything_else_in_the_config(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home)}
    other = {"userID": "abc", "projects": {"/elsewhere": {"allowedTools": ["x"]},
                                           str(tmp_path): {"lastVersionBase": "2.1"}}}
    config_file(env).write_text(json.dumps(other))
    record(tmp_path, env, hasTrustDialogAccepted=True)
    record(tmp_path, env, hasClaudeMdExternalIncludesWarningShown=True,
           hasClaudeMdExternalIncludesApproved=False)
    doc = json.loads(config_file(env).read_text())
    assert doc["userID"] == "abc"
    assert doc["projects"]["/elsewhere"] == {"allowedTools": ["x"]}
    assert doc["projects"][str(tmp_path)] == {
        "lastVersionBase": "2.1", "hasTrustDialogAccepted": True,
        "hasClaudeMdExternalIncludesWarningShown": True,
        "hasClaudeMdExternalIncludesApproved": False}
    assert imports_decision(tmp_path, env) == (False, True)
    assert os.stat(config_file(env)).st_mode & 0o077 == 0  # the user's own state
    assert os.listdir(home) == [".claude.json"]  # no temporary file left


def test_a_config_that_is_not_json_is_never_overwritten(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home)}
    config_file(env).write_text("{ half a file")
    assert not is_trusted(tmp_path, env)
    with pytest.raises(ValueError, match="not readable JSON"):
        record(tmp_path, env, hasTrustDialogAccepted=True)
    assert config_file(env).read_text() == "{ half a file"


# What an untrusted folder's settings keep ---------------------------------------------


def write(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_an_untrusted_folder_keeps_its_restrictions_only(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp")}
    work = tmp_path / "work"
    write(work / ".claude" / "settings.json", {
        "permissions": {"allow": ["Bash"], "deny": ["Read(./x)"], "ask": ["Write"],
                        "defaultMode": "bypassPermissions",
                        "disableBypassPermissionsMode": "disable"},
        "env": {"PATH": "/evil"}, "model": "haiku", "outputStyle": "Concise",
        "someFutureKey": {"runs": "code"}})
    write(work / ".claude" / "settings.local.json", {"permissions": {"defaultMode": "plan"}})
    write(home / ".wisp" / "settings.json", {"env": {"MINE": "1"},
                                             "permissions": {"allow": ["Read"]}})
    settings = load_settings(work, env, selected=None, flag='{"env": {"FLAG": "1"}}')
    docs = {s.name: s.doc for s in settings.sources}
    assert docs["project"] == {
        "permissions": {"deny": ["Read(./x)"], "ask": ["Write"],
                        "disableBypassPermissionsMode": "disable"},
        "model": "haiku", "outputStyle": "Concise"}
    assert docs["local"] == {"permissions": {"defaultMode": "plan"}}  # narrowing: kept
    assert docs["user"]["env"] == {"MINE": "1"}  # the user's own and the host's: as given
    assert docs["flag"] == {"env": {"FLAG": "1"}}
    assert settings.merged_env() == {"MINE": "1", "FLAG": "1"}
    [(path, held)] = settings.held_back
    assert path == str(work / ".claude" / "settings.json")
    assert held == ["permissions.allow (1 rule)", "permissions.defaultMode bypassPermissions",
                    "env (PATH)", "someFutureKey (runs)"]
    note = held_back_note(settings, work, env)
    assert note is not None and note.count("\n") == 1 and note.endswith("\n")
    record(work, env, hasTrustDialogAccepted=True)
    trusted = load_settings(work, env, selected=None, flag=None)
    assert trusted.held_back == [] and held_back_note(trusted, work, env) is None
    assert trusted.merged_env() == {"MINE": "1", "PATH": "/evil"}
