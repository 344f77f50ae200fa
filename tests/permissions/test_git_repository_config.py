"""A repository's own git configuration can make read-only git run a program
(`core.fsmonitor`, filter and diff drivers, `diff.external`, `gpg.program`, a pager). The
judge reads it (wisp.shell.gitrepo), with real git as the oracle for how a
configuration file parses, and a git command in such a repository is never auto-allowed."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from wisp.shell import analyse
from wisp.shell.gitrepo import text_runs_code
from wisp.testing import reply

_SECTIONS = ['[core]', '[Core]', '[diff]', '[diff "x"]', '[diff.x]', '[filter "lfs"]',
             '[FILTER "a b"]', '[gpg]', '[gpg "ssh"]', '[pager]', '[user]', '[remote "o"]',
             '[include]', '[includeIf "gitdir:/x/"]', '[alias]', '[color "diff"]']
_KEYS = ["fsmonitor", "pager", "external", "program", "clean", "smudge", "process",
         "textconv", "command", "name", "url", "renames", "path", "log", "st", "editor"]
_VALUES = ["= evil", "= false", "= 0", '= "quoted value"', '= off ; comment', "= yes",
           "", "= a \\\n  continued", "=", '= ""', "= x # note"]
# The keys (lower-cased section, subsection or None, key) under which git may run a
# program, as `git config --list` names them.
_PROGRAM = {("core", None, "fsmonitor"), ("core", None, "pager"),
            ("diff", None, "external"), ("gpg", None, "program")}
_PROGRAM_IN_SUBSECTION = {("filter", "clean"), ("filter", "smudge"), ("filter", "process"),
                          ("diff", "textconv"), ("diff", "command"), ("gpg", "program")}


def _expected_by_git(path: Path) -> bool:
    """What real git makes of the file: any include, or any program key set to
    something other than false (a bare key is true; a bare fsmonitor is git's own
    daemon)."""
    listed = subprocess.run(["git", "config", "--file", str(path), "--list"],
                            capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        return True  # git cannot read it: nothing this reader should vouch for
    for line in listed.stdout.splitlines():
        name, has_value, value = line.partition("=")
        section, _, rest = name.partition(".")
        subsection, _, key = rest.rpartition(".")
        if section in ("include", "includeif"):
            return True
        program = ((section, None, key) in _PROGRAM if not subsection
                   else (section, key) in _PROGRAM_IN_SUBSECTION or section == "pager")
        program = program or (section == "pager" and not subsection)
        if not program:
            continue
        if not has_value:
            if key != "fsmonitor":
                return True
        elif value.strip().lower() not in {"", "false", "no", "off", "0"}:
            return True
    return False


def test_the_reader_agrees_with_git_on_generated_configurations(tmp_path: Path) -> None:
    rng = random.Random(20261206)
    config = tmp_path / "config"
    disagreements = []
    for _ in range(400):
        lines = []
        for _ in range(rng.randint(1, 4)):
            lines.append(rng.choice(_SECTIONS))
            lines += [f"\t{rng.choice(_KEYS)} {rng.choice(_VALUES)}".rstrip()
                      for _ in range(rng.randint(0, 3))]
        text = "\n".join(lines) + "\n"
        config.write_text(text)
        expected = _expected_by_git(config)
        if text_runs_code(text) != expected:
            disagreements.append((text, expected))
    assert disagreements == [], "\n---\n".join(f"{e}\n{t}" for t, e in disagreements[:6])


def test_an_ordinary_clone_stays_read_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "https://x/y"],
                   check=True)
    for command in ("git status", "git diff HEAD", "git log --oneline -3"):
        assert analyse(command, cwd=str(repo), env={}).read_only, command


@pytest.mark.parametrize("setting", [
    ("core.fsmonitor", "evil"), ("filter.lfs.clean", "evil"), ("diff.x.textconv", "evil"),
    ("diff.external", "evil"), ("gpg.program", "evil"), ("include.path", "other")])
def test_a_repository_that_names_a_program_makes_git_ask(tmp_path: Path, setting) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", *setting], check=True)
    for cwd, command in ((repo, "git status"), (repo / "sub", "git diff"),
                         (tmp_path, "git -C repo log"), (tmp_path, "cd repo && git status")):
        assert not analyse(command, cwd=str(cwd), env={}).read_only, (command, setting)
    assert analyse("git status", cwd=str(tmp_path), env={}).read_only  # not a repository


def test_print_mode_never_runs_a_clones_fsmonitor(wisp, server) -> None:
    """End to end: the model's `git status` in such a clone is not auto-allowed in `-p`,
    so the repository's program never runs; in an ordinary clone it runs at once."""
    witness = wisp.cwd / "witness"
    subprocess.run(["git", "init", "-q", str(wisp.cwd)], check=True)
    subprocess.run(["git", "-C", str(wisp.cwd), "config", "core.fsmonitor",
                    f"touch {witness}; echo"], check=True)
    server.script(reply.tool_use("Bash", {"command": "git status"}), reply.text("done"))
    run = wisp("-p", "status?", "--output-format", "json")
    assert run.returncode == 0
    assert not witness.exists()
    [denied] = run.result["permission_denials"]
    assert denied["tool_input"]["command"] == "git status"
    subprocess.run(["git", "-C", str(wisp.cwd), "config", "--unset", "core.fsmonitor"],
                   check=True)
    server.script(reply.tool_use("Bash", {"command": "git status"}), reply.text("done"))
    run = wisp("-p", "status?", "--output-format", "json")
    assert run.result["permission_denials"] == []
