"""The "don't ask again" rule: suggested for real tools, checked, saved, and then honoured
by wisp's real settings loader and permission engine (deny still winning)."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from wisp.mcp.client import McpTool
from wisp.permissions.engine import PermissionPolicy, Verdict, evaluate
from wisp.rules import Rule
from wisp.runtime.build import permission_policy
from wisp.runtime.config import RuntimeConfig
from wisp.settings.loader import load_settings
from wisp.settings.trust import record
from wisp.tools.base import Tool
from wisp.tools.registry import builtin_tools
from wisp.tui.rules import (
    command_rule,
    is_compound,
    save_allow_rule,
    suggest_rule,
    validate_rule,
)

JSON = dict[str, Any]
TOOLS = builtin_tools()


def tool(name: str) -> Tool:
    return TOOLS[name]


def bash_rule(command: str) -> str:
    return suggest_rule(tool("Bash"), {"command": command})


def judge(name: str, tool_input: JSON, cwd: Path, allow: Sequence[str] = (),
          deny: Sequence[str] = ()) -> Verdict:
    policy = PermissionPolicy(allow=[Rule.parse(r) for r in allow],
                              deny=[Rule.parse(r) for r in deny], cwd=cwd,
                              env={"HOME": str(cwd.parent / "home")})
    return evaluate(tool(name), tool_input, policy)


# ---- Bash --------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "rule"), [
    ("npm test -- -x", "Bash(npm test:*)"),
    ("npm test", "Bash(npm test:*)"),
    ("ls -la", "Bash(ls:*)"),
    ("ls", "Bash(ls:*)"),
    ("git commit -m x", "Bash(git commit:*)"),
    ('git commit -m "fix; and | more"', "Bash(git commit:*)"),  # operators inside quotes
    ("git push origin main", "Bash(git push:*)"),
    ("cargo build --release", "Bash(cargo build:*)"),
    ("docker compose up -d", "Bash(docker compose:*)"),
    ("pip install-x foo", "Bash(pip install-x:*)"),
    ("python script.py", "Bash(python:*)"),
    ("python -m pytest", "Bash(python:*)"),
    ("cat README", "Bash(cat README:*)"),  # a plain word is taken for a subcommand
    ("cat src/main.py", "Bash(cat:*)"),
    ("cat ~/x", "Bash(cat:*)"),
    ("rm *.o", "Bash(rm:*)"),
    ("make CC=gcc", "Bash(make:*)"),
    ("echo $HOME", "Bash(echo:*)"),
    ("echo 'quoted'", "Bash(echo:*)"),
    ('echo "x"', "Bash(echo:*)"),
    ("sleep 10", "Bash(sleep:*)"),
    ("kill -9 1234", "Bash(kill:*)"),
    ("make 2>&1", "Bash(make:*)"),
    ("make >out.log 2>&1", "Bash(make:*)"),
    ("make &>out.log", "Bash(make:*)"),
    ("./scripts/run.sh go", "Bash(run.sh go:*)"),  # the engine matches the basename
    ("/usr/bin/env", "Bash(env:*)"),
    ("  npm   test  ", "Bash(npm test:*)"),
    ("find . -name '*.pyc' -exec rm {} \\;", "Bash(find:*)"),  # an escaped ;
    ("make \\\n  test", "Bash(make:*)"),  # a line continuation is not a new command
    # Compound lines, substitutions and assignments: the exact command.
    ("npm test && rm -rf /", "Bash(npm test && rm -rf /)"),
    ("a || b", "Bash(a || b)"),
    ("a; b", "Bash(a; b)"),
    ("a | b", "Bash(a | b)"),
    ("a |& b", "Bash(a |& b)"),
    ("sleep 1 & rm x", "Bash(sleep 1 & rm x)"),
    ("a\nb", "Bash(a\nb)"),
    ("echo `rm x`", "Bash(echo `rm x`)"),
    ("echo $(rm x)", "Bash(echo $(rm x))"),
    ('echo "$(rm x)"', 'Bash(echo "$(rm x)")'),
    ("diff <(ls a) <(ls b)", "Bash(diff <(ls a) <(ls b))"),
    ("FOO=1 make", "Bash(FOO=1 make)"),
    ("PATH+=:/x make", "Bash(PATH+=:/x make)"),
    ("echo 'unclosed", "Bash(echo 'unclosed)"),
    ('"my prog" x', 'Bash("my prog" x)'),
    ("$EDITOR file", "Bash($EDITOR file)"),
    ("(cd x && make)", "Bash((cd x && make))"),
    ("2>/dev/null make", "Bash(2>/dev/null make)"),
])
def test_bash_suggestions(command: str, rule: str) -> None:
    assert bash_rule(command) == rule
    assert validate_rule(rule) is None


def test_single_quotes_hide_operators_but_double_quotes_not_substitutions() -> None:
    assert not is_compound("echo 'a && $(b) `c`'")
    assert is_compound('echo "$(b)"')
    assert is_compound('echo "`b`"')
    assert not is_compound('echo "a; b | c && d"')
    assert not is_compound('echo "say \\"hi\\"; ok"')


def test_a_blank_command_suggests_nothing() -> None:
    # A bare `Bash` would allow every command: better no rule than that.
    assert bash_rule("") == ""
    assert bash_rule("   \n ") == ""
    assert suggest_rule(tool("Bash"), {}) == ""


@pytest.mark.parametrize("command", [
    "npm test -- -x", "ls -la", "git commit -m 'a message'", "python script.py",
    "cargo build --release", "./run.sh go", "make 2>&1", "sleep 10", "grep -r foo src",
])
def test_a_prefix_suggestion_lets_the_command_through(tmp_path: Path, command: str) -> None:
    rule = bash_rule(command)
    assert rule.endswith(":*)")
    assert judge("Bash", {"command": command}, tmp_path, allow=[rule]).behavior == "allow"


def test_a_prefix_rule_does_not_cover_a_different_subcommand(tmp_path: Path) -> None:
    rule = bash_rule("git commit -m x")
    assert judge("Bash", {"command": "git push --force"}, tmp_path, allow=[rule]
                 ).behavior == "ask"


# Generated lines: plain commands joined by operators (and the other compound forms).
_PROGRAMS = ["npm", "git", "make", "cargo", "mytool", "python", "ls", "echo", "./run.sh"]
_ARGS = ["test", "build", "-x", "--flag", "--opt=1", "src", "a.txt", "'quoted arg'",
         '"two words"', "README", "x_y", "123", "*.py", "'a;b'", '"a|b"', "2>&1"]
_OPERATORS = [" && ", " || ", "; ", " | ", " & ", "\n", " |& ", ";"]
_SUBSTITUTIONS = ["echo $(date)", "echo `date`", 'echo "$(whoami)"', "cat <(ls)",
                  "tee >(wc -l)", "FOO=1 make", "A=1 B=2 npm test"]


def _simple(rng: random.Random) -> str:
    words = [rng.choice(_PROGRAMS), *rng.choices(_ARGS, k=rng.randint(0, 4))]
    return " ".join(words)


def _compound(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return rng.choice(_SUBSTITUTIONS) + rng.choice(["", " " + _simple(rng)])
    parts = [_simple(rng) for _ in range(rng.randint(2, 4))]
    line = parts[0]
    for part in parts[1:]:
        line += rng.choice(_OPERATORS) + part
    return line


_SIMPLE = [_simple(random.Random(seed)) for seed in range(200)]
_COMPOUND = [_compound(random.Random(1000 + seed)) for seed in range(200)]


@pytest.mark.parametrize("command", _COMPOUND)
def test_a_compound_line_never_gets_a_prefix_rule(command: str) -> None:
    rule = bash_rule(command)
    assert rule == f"Bash({command.strip()})"
    assert validate_rule(rule) is None
    # Parsed back, the rule's content is exactly the line.
    assert Rule.parse(rule) == Rule("Bash", command.strip())


@pytest.mark.parametrize("command", _SIMPLE)
def test_a_simple_line_gets_a_prefix_rule_that_lets_it_through(tmp_path: Path,
                                                               command: str) -> None:
    rule = bash_rule(command)
    assert rule.startswith("Bash(") and rule.endswith(":*)")
    assert validate_rule(rule) is None
    prefix = rule[len("Bash("):-len(":*)")]
    words = command.split()
    name = words[0].rsplit("/", 1)[-1]
    assert prefix.split() in ([name], [name, *words[1:2]])
    assert judge("Bash", {"command": command}, tmp_path, allow=[rule]).behavior == "allow"


@pytest.mark.parametrize("seed", range(150))
def test_any_suggestion_for_any_text_is_a_valid_rule(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "ab -_=$'\"`()|&;<>*?[]{}\\\n\t/.~#é"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
    rule = bash_rule(text)
    line = text.strip()
    # The shape, written out here rather than read from the code: nothing for a blank
    # line; otherwise the exact line, or the command's name (its basename) and perhaps
    # its first argument as a prefix. Never a word the line does not have.
    assert (rule == "") is (line == ""), (rule, text)
    assert rule == "" or (rule.startswith("Bash(") and rule.endswith(")")), rule
    content = rule[len("Bash("):-1]
    if rule and content != line:
        assert content.endswith(":*"), rule
        words = line.split()
        name = words[0].rstrip("/").rsplit("/", 1)[-1] or words[0]
        assert content[:-2].split(" ") in ([name], [name, *words[1:2]]), (rule, line)
    assert rule == "" or validate_rule(rule) is None
    assert rule == "" or Rule.parse(rule) == Rule("Bash", content)


# ---- path, domain and other tools -------------------------------------------------------


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "outside" / "deep").mkdir(parents=True)
    return project


@pytest.mark.parametrize(("name", "tool_input", "rule"), [
    ("Write", {"file_path": "{cwd}/src/pkg/a.py", "content": ""}, "Edit(./src/pkg/**)"),
    ("Edit", {"file_path": "{cwd}/a.py", "old_string": "a", "new_string": "b"}, "Edit(./**)"),
    ("Write", {"file_path": "{out}/deep/new.txt", "content": ""}, "Edit(/{out}/deep/**)"),
    ("Read", {"file_path": "{out}/deep/f.txt"}, "Read(/{out}/deep/**)"),
    ("Read", {"file_path": "src/pkg/rel.py"}, "Read(./src/pkg/**)"),
    ("Read", {"file_path": "{cwd}/../outside/f.txt"}, "Read(/{out}/**)"),
    ("Grep", {"pattern": "x", "path": "{out}/deep"}, "Read(/{out}/deep)"),
    ("Grep", {"pattern": "x"}, "Read(.)"),
    ("Glob", {"pattern": "*.py", "path": "{cwd}/src"}, "Read(./src)"),
    ("Glob", {"pattern": "*.py", "path": "{out}"}, "Read(/{out})"),
])
def test_path_suggestions(cwd: Path, name: str, tool_input: JSON, rule: str) -> None:
    out = str(cwd.parent.resolve() / "outside")
    filled = {k: v.format(cwd=cwd, out=out) for k, v in tool_input.items()}
    assert suggest_rule(tool(name), filled, cwd=cwd) == rule.format(out=out)


@pytest.mark.parametrize(("name", "tool_input"), [
    ("Write", {"file_path": "{out}/deep/new.txt", "content": ""}),
    ("Edit", {"file_path": "{out}/deep/f.txt", "old_string": "a", "new_string": "b"}),
    ("Read", {"file_path": "{out}/deep/f.txt"}),
    ("Read", {"file_path": "{out}/f.txt"}),
    ("Grep", {"pattern": "x", "path": "{out}/deep"}),
    ("Glob", {"pattern": "*.py", "path": "{out}"}),
    ("Write", {"file_path": "{cwd}/src/pkg/a.py", "content": ""}),
])
def test_a_path_suggestion_lets_the_call_through_and_no_more(cwd: Path, name: str,
                                                             tool_input: JSON) -> None:
    out = str(cwd.parent / "outside")
    filled = {k: v.format(cwd=cwd, out=out) for k, v in tool_input.items()}
    assert judge(name, filled, cwd).behavior == "ask"  # why the dialog was shown
    rule = suggest_rule(tool(name), filled, cwd=cwd)
    assert validate_rule(rule) is None
    assert judge(name, filled, cwd, allow=[rule]).behavior == "allow"
    # Not the folder next door, nor the parent.
    elsewhere = cwd.parent / "elsewhere"
    sibling = {"Read": {"file_path": f"{elsewhere}/f"},
               "Write": {"file_path": f"{elsewhere}/f", "content": ""}}
    family = "Write" if rule.startswith("Edit") else "Read"
    assert judge(family, sibling[family], cwd, allow=[rule]).behavior == "ask"


def test_a_symlinked_working_folder_is_still_project_relative(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert suggest_rule(tool("Write"), {"file_path": f"{link}/src/a.py", "content": ""},
                        cwd=link) == "Edit(./src/**)"
    assert suggest_rule(tool("Write"), {"file_path": f"{real}/src/a.py", "content": ""},
                        cwd=link) == "Edit(./src/**)"


def test_glob_characters_in_a_folder_name_match_only_that_folder(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    odd = tmp_path / "a*b[1]?"
    odd.mkdir()
    call = {"file_path": f"{odd}/f.txt"}
    rule = suggest_rule(tool("Read"), call, cwd=cwd)
    assert "[*]" in rule and "[\\[]" in rule and "[?]" in rule
    assert judge("Read", call, cwd, allow=[rule]).behavior == "allow"
    (tmp_path / "aXXb11x").mkdir()
    assert judge("Read", {"file_path": f"{tmp_path}/aXXb11x/f.txt"}, cwd,
                 allow=[rule]).behavior == "ask"
    # A searched folder with such a name gets its parent, escaped, as a glob.
    search = {"pattern": "x", "path": str(odd)}
    grep_rule = suggest_rule(tool("Grep"), search, cwd=cwd)
    assert grep_rule.endswith("/**)")
    assert judge("Grep", search, cwd, allow=[grep_rule]).behavior == "allow"


def test_the_filesystem_root(tmp_path: Path) -> None:
    assert suggest_rule(tool("Read"), {"file_path": "/f"}, cwd=tmp_path) == "Read(//**)"
    assert suggest_rule(tool("Grep"), {"pattern": "x", "path": "/"}, cwd=tmp_path) == "Read(//)"


def test_default_cwd_is_the_process_cwd() -> None:
    here = Path.cwd()
    assert suggest_rule(tool("Read"), {"file_path": str(here / "a" / "b.txt")}) == "Read(./a/**)"


def test_a_file_tool_without_a_path_suggests_nothing(tmp_path: Path) -> None:
    assert suggest_rule(tool("Write"), {"content": "x"}, cwd=tmp_path) == ""


def test_domain_rules() -> None:
    fetch = tool("WebFetch")
    assert suggest_rule(fetch, {"url": "https://Docs.Python.org/3/x?y", "prompt": ""}) == (
        "WebFetch(domain:docs.python.org)")
    assert suggest_rule(fetch, {"url": "not a url", "prompt": ""}) == ""
    assert suggest_rule(fetch, {"prompt": ""}) == ""


def test_a_domain_suggestion_lets_the_fetch_through(tmp_path: Path) -> None:
    call = {"url": "https://example.org/page", "prompt": "x"}
    rule = suggest_rule(tool("WebFetch"), call)
    assert judge("WebFetch", call, tmp_path, allow=[rule]).behavior == "allow"
    other = {"url": "https://example.com/page", "prompt": "x"}
    assert judge("WebFetch", other, tmp_path, allow=[rule]).behavior == "ask"


def test_tools_without_content_rules_get_their_bare_name() -> None:
    mcp = McpTool(SimpleNamespace(name="srv"), {"name": "tool"})  # type: ignore[arg-type]
    assert suggest_rule(mcp, {"anything": 1}) == "mcp__srv__tool"
    assert suggest_rule(tool("TodoWrite"), {"todos": []}) == "TodoWrite"


def test_command_rule_uses_the_given_tool_name() -> None:
    assert command_rule("Shell", "npm test") == "Shell(npm test:*)"


# ---- validate_rule -----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Bash", "Bash(npm test:*)", "Bash(git status)", "Bash(ls *)", "Read(./src/**)",
    "Edit(//abs/path/**)", "Edit(~/x/**)", "WebFetch(domain:example.com)", "mcp__srv",
    "mcp__my-srv__do_it", "  Read  ", "Bash(echo (a) b)", "Bash(a\nb)", "Bash(*)",
])
def test_valid_rules(text: str) -> None:
    assert validate_rule(text) is None


@pytest.mark.parametrize(("text", "words"), [
    ("", "empty"),
    ("   ", "empty"),
    ("Bash(npm test", "Unbalanced"),
    ("Bash npm test)", "Unbalanced"),
    ("(npm test)", "Unbalanced"),
    ("Bash)(", "Unbalanced"),
    ("Bash npm", "not a tool name"),
    ("Bash/x(y)", "not a tool name"),
    ("WebFetch(example.com)", "domain:"),
    ("WebFetch(domain:)", "domain:"),
    ("Bash(:*)", "prefix is empty"),
    ("Bash(  :*)", "prefix is empty"),
])
def test_invalid_rules(text: str, words: str) -> None:
    problem = validate_rule(text)
    assert problem is not None and words in problem


# ---- saving ------------------------------------------------------------------------------


def settings_file(cwd: Path) -> Path:
    return cwd / ".claude" / "settings.local.json"


def test_save_creates_the_folder_and_file(tmp_path: Path) -> None:
    path = save_allow_rule(tmp_path, "Bash(npm test:*)")
    assert path == settings_file(tmp_path)
    assert path.read_text() == (
        '{\n  "permissions": {\n    "allow": [\n      "Bash(npm test:*)"\n    ]\n  }\n}\n')


def test_save_keeps_every_other_key_in_order(tmp_path: Path) -> None:
    doc = {"model": "x", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read"],
                                         "defaultMode": "default"},
           "env": {"A": "é"}, "hooks": {}}
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).write_text(json.dumps(doc))
    save_allow_rule(tmp_path, "Bash(make:*)")
    saved = json.loads(settings_file(tmp_path).read_text())
    assert list(saved) == ["model", "permissions", "env", "hooks"]
    assert list(saved["permissions"]) == ["deny", "allow", "defaultMode"]
    assert saved["permissions"]["allow"] == ["Read", "Bash(make:*)"]
    assert saved["env"] == {"A": "é"}
    assert "é" in settings_file(tmp_path).read_text()  # written as UTF-8, not escaped


def test_save_adds_allow_to_permissions_without_it(tmp_path: Path) -> None:
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).write_text('{"permissions": {"deny": []}, "model": "m"}')
    save_allow_rule(tmp_path, "Read")
    saved = json.loads(settings_file(tmp_path).read_text())
    assert saved == {"permissions": {"deny": [], "allow": ["Read"]}, "model": "m"}


def test_save_does_not_duplicate(tmp_path: Path) -> None:
    save_allow_rule(tmp_path, "Bash(npm test:*)")
    before = settings_file(tmp_path).stat().st_mtime_ns
    save_allow_rule(tmp_path, "  Bash(npm test:*) ")
    save_allow_rule(tmp_path, "Bash(npm test:*)")
    assert json.loads(settings_file(tmp_path).read_text())["permissions"]["allow"] == [
        "Bash(npm test:*)"]
    assert settings_file(tmp_path).stat().st_mtime_ns == before  # not even rewritten
    save_allow_rule(tmp_path, "Bash")
    save_allow_rule(tmp_path, "Bash(*)")  # the same rule as `Bash`
    assert json.loads(settings_file(tmp_path).read_text())["permissions"]["allow"] == [
        "Bash(npm test:*)", "Bash"]


@pytest.mark.parametrize("text", ["{not json", '{"a": 1,}', "[1, 2]",
                                  '{"permissions": {"allow": "Bash"}}',
                                  '{"permissions": []}'])
def test_a_bad_file_is_never_overwritten(tmp_path: Path, text: str) -> None:
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).write_text(text)
    with pytest.raises(ValueError, match=r"settings\.local\.json") as raised:
        save_allow_rule(tmp_path, "Bash(make:*)")
    assert "not saved" in str(raised.value)
    assert settings_file(tmp_path).read_text() == text
    assert os.listdir(settings_file(tmp_path).parent) == ["settings.local.json"]


def test_a_non_utf8_file_is_never_overwritten(tmp_path: Path) -> None:
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).write_bytes(b"\xff\xfe{}")
    with pytest.raises(ValueError, match="UTF-8"):
        save_allow_rule(tmp_path, "Read")
    assert settings_file(tmp_path).read_bytes() == b"\xff\xfe{}"


def test_an_empty_file_is_taken_as_empty_settings(tmp_path: Path) -> None:
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).write_text("\n")
    save_allow_rule(tmp_path, "Read")
    assert json.loads(settings_file(tmp_path).read_text()) == {"permissions": {"allow": ["Read"]}}


def test_an_invalid_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Unbalanced"):
        save_allow_rule(tmp_path, "Bash(npm test")
    assert not settings_file(tmp_path).exists()


def test_save_keeps_the_file_mode_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    save_allow_rule(tmp_path, "Read")
    settings_file(tmp_path).chmod(0o640)
    save_allow_rule(tmp_path, "Bash(make:*)")
    assert settings_file(tmp_path).stat().st_mode & 0o777 == 0o640
    assert os.listdir(settings_file(tmp_path).parent) == ["settings.local.json"]


def test_save_writes_through_a_symlinked_file(tmp_path: Path) -> None:
    shared = tmp_path / "shared.json"
    shared.write_text('{"model": "m"}')
    settings_file(tmp_path).parent.mkdir()
    settings_file(tmp_path).symlink_to(shared)
    save_allow_rule(tmp_path, "Read")
    assert settings_file(tmp_path).is_symlink()
    assert json.loads(shared.read_text()) == {"model": "m", "permissions": {"allow": ["Read"]}}


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    save_allow_rule(tmp_path, "Read")
    before = settings_file(tmp_path).read_text()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        save_allow_rule(tmp_path, "Bash(make:*)")
    assert settings_file(tmp_path).read_text() == before
    assert os.listdir(settings_file(tmp_path).parent) == ["settings.local.json"]


# ---- end to end: saved, loaded by the real loader, judged by the real engine -------------


def runtime_policy(cwd: Path, home: Path) -> PermissionPolicy:
    """The policy the runtime would build for a session in `cwd`."""
    env = {"HOME": str(home), "WISP_CONFIG_DIR": str(home / ".wisp")}
    # The dialog that saves rules runs only in a folder the user trusted.
    record(cwd, env, hasTrustDialogAccepted=True)
    settings = load_settings(cwd, env, selected=None, flag=None)
    assert settings.errors == []
    return permission_policy(RuntimeConfig(cwd=cwd, env=env), "default", settings, env)


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, Path]:
    cwd, home = tmp_path / "project", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return cwd, home


def test_a_saved_rule_is_loaded_and_allows_the_call(session: tuple[Path, Path]) -> None:
    cwd, home = session
    call = {"command": "npm test -- --watch=false"}
    assert evaluate(tool("Bash"), call, runtime_policy(cwd, home)).behavior == "ask"
    save_allow_rule(cwd, suggest_rule(tool("Bash"), call, cwd=cwd))
    policy = runtime_policy(cwd, home)
    assert Rule("Bash", "npm test:*") in policy.allow
    verdict = evaluate(tool("Bash"), call, policy)
    assert (verdict.behavior, verdict.rule) == ("allow", "Bash(npm test:*)")
    # The same prefix with other arguments, but not another command.
    assert evaluate(tool("Bash"), {"command": "npm test"}, policy).behavior == "allow"
    assert evaluate(tool("Bash"), {"command": "npm publish"}, policy).behavior == "ask"


def test_a_deny_rule_in_the_same_file_still_wins(session: tuple[Path, Path]) -> None:
    cwd, home = session
    settings_file(cwd).parent.mkdir()
    settings_file(cwd).write_text(json.dumps({"permissions": {"deny": ["Bash(npm test:*)"]}}))
    call = {"command": "npm test"}
    save_allow_rule(cwd, suggest_rule(tool("Bash"), call, cwd=cwd))
    saved = json.loads(settings_file(cwd).read_text())
    assert saved == {"permissions": {"deny": ["Bash(npm test:*)"],
                                     "allow": ["Bash(npm test:*)"]}}
    verdict = evaluate(tool("Bash"), call, runtime_policy(cwd, home))
    assert (verdict.behavior, verdict.rule) == ("deny", "Bash(npm test:*)")


def test_a_saved_path_rule_is_loaded_and_allows_the_edit(session: tuple[Path, Path]) -> None:
    cwd, home = session
    target = cwd.parent / "shared" / "notes.md"
    call = {"file_path": str(target), "content": "x"}
    assert evaluate(tool("Write"), call, runtime_policy(cwd, home)).behavior == "ask"
    save_allow_rule(cwd, suggest_rule(tool("Write"), call, cwd=cwd))
    assert evaluate(tool("Write"), call, runtime_policy(cwd, home)).behavior == "allow"
