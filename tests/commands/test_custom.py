"""Custom slash commands: loading real files, front matter, precedence and expansion."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.privileges import IS_ROOT, open_folder, unprivileged
from wisp.commands.custom import (
    CustomCommand,
    expand,
    load_commands,
    parse_slash,
    split_arguments,
    split_front_matter,
)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, config = tmp_path / "project", tmp_path / "config"
    cwd.mkdir()
    config.mkdir()
    return cwd, config


def project_file(cwd: Path, relative: str, text: str) -> Path:
    return write(cwd / ".claude" / "commands" / relative, text)


def user_file(config: Path, relative: str, text: str) -> Path:
    return write(config / "commands" / relative, text)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def command(body: str) -> CustomCommand:
    return CustomCommand(name="t", description="", body=body, source="project",
                         path=Path("t.md"))


# ---- loading ------------------------------------------------------------------------------


def test_no_folders_no_commands(dirs: tuple[Path, Path]) -> None:
    assert load_commands(*dirs) == {}


def test_front_matter_fields(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    path = project_file(cwd, "commit.md", (
        "---\n"
        'description: "Commit: staged changes only"\n'
        "argument-hint: [message]\n"
        "model: 'claude-sonnet-4-5'\n"
        "allowed-tools: Bash(git add:*), Bash(git commit:*), Read\n"
        "unknown-key: ignored\n"
        "---\n"
        "\n"
        "Commit with message $ARGUMENTS\n"))
    found = load_commands(cwd, config)
    assert list(found) == ["commit"]
    c = found["commit"]
    assert (c.name, c.source, c.path) == ("commit", "project", path)
    assert c.description == "Commit: staged changes only"
    assert c.argument_hint == "[message]"
    assert c.model == "claude-sonnet-4-5"
    assert c.allowed_tools == ("Bash(git add:*)", "Bash(git commit:*)", "Read")
    assert c.body == "Commit with message $ARGUMENTS"


def test_without_front_matter_the_first_line_describes(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "review.md", "\n\n# Review the diff carefully\n\nThen report.\n")
    c = load_commands(cwd, config)["review"]
    assert c.description == "Review the diff carefully"
    assert c.body == "# Review the diff carefully\n\nThen report."
    assert (c.argument_hint, c.model, c.allowed_tools) == (None, None, ())


def test_a_long_first_line_is_cut_to_80(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "long.md", "word " * 40)
    description = load_commands(cwd, config)["long"].description
    assert len(description) == 80
    assert description.endswith("…")
    assert ("word " * 40).startswith(description[:-1])


def test_an_empty_description_falls_back_to_the_body(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "x.md", "---\ndescription:\nmodel: haiku\n---\nDo the thing\n")
    c = load_commands(cwd, config)["x"]
    assert (c.description, c.model) == ("Do the thing", "haiku")


def test_yaml_lists_and_block_text(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "x.md", (
        "---\n"
        "# a comment\n"
        "description: >\n"
        "  Runs the tests\n"
        "  and reports\n"
        "allowed-tools:\n"
        "  - Read\n"
        '  - "Bash(npm test:*)"\n'
        "---\n"
        "body\n"))
    c = load_commands(cwd, config)["x"]
    assert c.description == "Runs the tests and reports"
    assert c.allowed_tools == ("Read", "Bash(npm test:*)")


def test_a_flow_list_and_commas_inside_a_rule(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "x.md", '---\nallowed-tools: [Read, Bash(echo a, b), "Grep"]\n---\nb\n')
    assert load_commands(cwd, config)["x"].allowed_tools == ("Read", "Bash(echo a, b)", "Grep")


def test_crlf_and_bom(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    path = cwd / ".claude" / "commands" / "win.md"
    path.parent.mkdir(parents=True)
    path.write_bytes("\ufeff---\r\ndescription: Windows\r\n---\r\nline one\r\n".encode())
    c = load_commands(cwd, config)["win"]
    assert (c.description, c.body) == ("Windows", "line one")


@pytest.mark.parametrize("text", [
    "---\ndescription: never closed\nbody\n",  # no closing ---
    "---\ndescription: ok\nthis line is not a key\n---\nbody\n",
    "---\n: no key\n---\nbody\n",
    "---\n  indented first: line\n---\nbody\n",
])
def test_broken_front_matter_makes_the_whole_file_the_body(dirs: tuple[Path, Path],
                                                            text: str) -> None:
    cwd, config = dirs
    project_file(cwd, "x.md", text)
    c = load_commands(cwd, config)["x"]
    assert c.body == text.strip()
    assert c.description == "---"
    assert (c.argument_hint, c.model, c.allowed_tools) == (None, None, ())


def test_subfolders_give_namespaced_names(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "frontend/component.md", "Make a component")
    project_file(cwd, "a/b/c.md", "Deep")
    project_file(cwd, "top.md", "Top")
    found = load_commands(cwd, config)
    assert list(found) == ["a:b:c", "frontend:component", "top"]
    assert found["frontend:component"].body == "Make a component"


def test_only_visible_markdown_files_with_typable_names(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "notes.txt", "not markdown")
    project_file(cwd, ".hidden.md", "hidden")
    project_file(cwd, ".git/x.md", "hidden folder")
    project_file(cwd, "two words.md", "cannot be typed after a slash")
    project_file(cwd, "ok-name_1.2.md", "fine")
    assert list(load_commands(cwd, config)) == ["ok-name_1.2"]


def test_project_commands_win_over_user_commands(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    user_file(config, "deploy.md", "user deploy")
    user_file(config, "mine.md", "user only")
    project_file(cwd, "deploy.md", "project deploy")
    found = load_commands(cwd, config)
    assert list(found) == ["deploy", "mine"]
    assert (found["deploy"].source, found["deploy"].body) == ("project", "project deploy")
    assert (found["mine"].source, found["mine"].body) == ("user", "user only")


def test_result_is_sorted_across_sources(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    for name in ("zeta", "alpha"):
        user_file(config, f"{name}.md", name)
    for name in ("mid", "beta"):
        project_file(cwd, f"{name}.md", name)
    assert list(load_commands(cwd, config)) == ["alpha", "beta", "mid", "zeta"]


def test_bad_files_are_skipped_not_raised(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "good.md", "fine")
    bad = cwd / ".claude" / "commands" / "binary.md"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    (cwd / ".claude" / "commands" / "dangling.md").symlink_to(cwd / "missing.md")
    (cwd / ".claude" / "commands" / "folder.md").mkdir()
    assert list(load_commands(cwd, config)) == ["good"]


def test_an_unreadable_project_file_leaves_the_user_command(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    user_file(config, "x.md", "user version")
    (cwd / ".claude" / "commands").mkdir(parents=True)
    (cwd / ".claude" / "commands" / "x.md").write_bytes(b"\xff\xff")
    assert load_commands(cwd, config)["x"].source == "user"


def test_a_file_without_read_permission_is_skipped() -> None:
    """Run as a user the file's mode binds (as root, a forked child that dropped to
    nobody), in a folder that user can enter."""
    with open_folder() as root:
        cwd, config = root / "project", root / "config"
        config.mkdir()
        secret = project_file(cwd, "secret.md", "x")
        project_file(cwd, "open.md", "y")
        secret.chmod(0)
        loaded = unprivileged(lambda: sorted(load_commands(cwd, config)))
    assert loaded == ["open"]


@pytest.mark.skipif(not IS_ROOT, reason="only root reads a file whatever its mode")
def test_root_loads_a_file_whatever_its_mode(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "secret.md", "x").chmod(0)
    assert list(load_commands(cwd, config)) == ["secret"]


def test_a_folder_symlink_loop_does_not_hang(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "sub/x.md", "x")
    (cwd / ".claude" / "commands" / "sub" / "loop").symlink_to(cwd / ".claude" / "commands")
    assert list(load_commands(cwd, config)) == ["sub:x"]


def test_commands_folder_that_is_a_file(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    write(cwd / ".claude" / "commands", "not a folder")
    assert load_commands(cwd, config) == {}


def test_split_front_matter_keeps_text_without_it() -> None:
    assert split_front_matter("just text\n---\n") == ({}, "just text\n---\n")
    assert split_front_matter("---\n---\nbody") == ({}, "body")


# ---- expansion ----------------------------------------------------------------------------


def test_arguments_placeholder() -> None:
    assert expand(command("Fix issue $ARGUMENTS now"), "#123 urgently") == (
        "Fix issue #123 urgently now")


def test_positional_placeholders() -> None:
    body = "Review PR #$1 with priority $2 and assign to $3."
    assert expand(command(body), '456 high "Ada Lovelace"') == (
        "Review PR #456 with priority high and assign to Ada Lovelace.")


def test_missing_positionals_are_empty() -> None:
    assert expand(command("[$1][$2][$3]"), "only") == "[only][][]"
    assert expand(command("[$1]"), "") == "[]"


def test_both_kinds_together_and_multi_digit_indexes() -> None:
    args = " ".join(f"a{i}" for i in range(1, 12))
    assert expand(command("$11|$1|$ARGUMENTS"), args) == f"a11|a1|{args}"


def test_an_unbalanced_quote_falls_back_to_whitespace_split() -> None:
    assert split_arguments("it's fine") == ["it's", "fine"]
    assert expand(command("$1/$2"), "it's fine") == "it's/fine"


def test_substituted_text_is_not_expanded_again() -> None:
    assert expand(command("$1 then $ARGUMENTS"), "$2 $ARGUMENTS") == (
        "$2 then $2 $ARGUMENTS")


def test_without_placeholders_the_arguments_are_appended() -> None:
    assert expand(command("Summarise the repo."), "briefly") == (
        "Summarise the repo.\n\nARGUMENTS: briefly")
    assert expand(command("Summarise the repo."), "   ") == "Summarise the repo."
    assert expand(command(""), "x") == "ARGUMENTS: x"


def test_dollar_zero_and_other_dollars_are_not_placeholders() -> None:
    # `$0` and `$HOME` are not positional placeholders: the arguments are appended.
    assert expand(command("echo $0 $HOME"), "x") == "echo $0 $HOME\n\nARGUMENTS: x"


def test_a_huge_index_is_just_empty() -> None:
    assert expand(command("[$" + "9" * 5000 + "]"), "a") == "[]"


_ALPHABET = ['a', 'b', ' ', '  ', '"', "'", '\\', '$1', '$ARGUMENTS', '\n', '\t', 'é', '#',
             '--flag', '=', '*', ';', '&&', '`', '$(x)', '{', '}']


def _random_arguments(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 12)))


_CASES = [_random_arguments(random.Random(seed)) for seed in range(300)]
SHLEX_SPACE = " \t\r\n"


def reference_words(text: str) -> list[str]:
    """The oracle for positional words, written out here rather than taken from the code
    under test: POSIX quote removal without expansion. Outside quotes a backslash keeps the
    next character and whitespace ends a word; single quotes keep everything; inside
    double quotes a backslash keeps only a following `"` or `\\`. An unclosed quote or a
    trailing backslash is not shell words: then plain whitespace splitting."""
    words: list[str] = []
    word: list[str] | None = None  # None between words; [] is an empty word ('')
    quote, i = "", 0
    while i < len(text):
        ch, nxt = text[i], text[i + 1 : i + 2]
        if quote:
            word, quote, skip = _quoted(word, quote, ch, nxt)
            i += skip
        elif ch in SHLEX_SPACE:
            if word is not None:
                words.append("".join(word))
            word = None
        elif ch == "\\":
            if not nxt:
                return text.split()
            word, i = [*(word or []), nxt], i + 1
        elif ch in "'\"":
            quote, word = ch, word or []
        else:
            word = [*(word or []), ch]
        i += 1
    if quote:
        return text.split()
    return words if word is None else [*words, "".join(word)]


def _quoted(word: list[str] | None, quote: str, ch: str,
            nxt: str) -> tuple[list[str] | None, str, int]:
    """One character inside `quote`: the word, the quote still open ("" once this closes
    it), and how many characters after `ch` it took (an escaped one)."""
    if ch == quote:
        return word, "", 0
    if quote == '"' and ch == "\\":  # a backslash inside double quotes
        escapes = nxt in ('"', "\\")
        return [*(word or []), nxt if escapes else ch], quote, int(escapes)
    return [*(word or []), ch], quote, 0


@pytest.mark.parametrize(("text", "words"), [
    ("a b", ["a", "b"]), ("'a b' c", ["a b", "c"]), ('"a \\"b\\" \\$c"', ['a "b" \\$c']),
    ("a\\ b", ["a b"]), ("''", [""]), ("it's fine", ["it's", "fine"]), ("a\\", ["a\\"]),
    ("x'y'z \"q\"", ["xyz", "q"]), ("  \t\n ", []),
])
def test_the_oracle_itself(text: str, words: list[str]) -> None:
    assert reference_words(text) == words


@pytest.mark.parametrize("arguments", _CASES)
def test_the_argument_text_is_never_lost(arguments: str) -> None:
    text = arguments.strip()
    # With $ARGUMENTS, or with no placeholder at all, the whole text reaches the prompt.
    assert text in expand(command("Do: $ARGUMENTS."), arguments)
    assert expand(command("Do it."), arguments).endswith(
        f"\n\nARGUMENTS: {text}" if text else "Do it.")
    # Positional placeholders receive the words, in order and unchanged.
    words = reference_words(text)
    body = " ".join(f"<${i}>" for i in range(1, len(words) + 1))
    assert expand(command(body), arguments) == " ".join(f"<{w}>" for w in words)


# Characters bash gives no meaning beyond quoting and splitting: with these alone, bash's
# own words are the words a user means, so bash is an oracle independent of both the code
# and `reference_words`.
_PLAIN_ALPHABET = ['a', 'b', ' ', '  ', '"', "'", '\\', '\t', 'é', '--flag', '=', 'x.y',
                   "'a b'", '"a b"', '"it\'s"', "'\\'", '"\\\\"', '"\\""', "''", '"\\a"']


def _plain_arguments(rng: random.Random) -> str:
    return "".join(rng.choice(_PLAIN_ALPHABET) for _ in range(rng.randint(1, 10)))


_PLAIN_CASES = [_plain_arguments(random.Random(1000 + seed)) for seed in range(200)]
_BASH_WORDS = 'f() { for w in "$@"; do printf "%s\\0" "$w"; done; }; f '


def bash_words(text: str) -> list[str] | None:
    """The words bash makes of `text` as a command's arguments; None when bash refuses it
    (an unclosed quote)."""
    done = subprocess.run(["bash", "--norc", "-c", _BASH_WORDS + text], capture_output=True,
                          timeout=30, check=False)
    if done.returncode != 0:
        return None
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle here")
@pytest.mark.parametrize("arguments", _PLAIN_CASES)
def test_positional_words_are_the_words_bash_makes(arguments: str) -> None:
    text = arguments.strip()
    dangling = (len(text) - len(text.rstrip("\\"))) % 2 == 1  # bash keeps it; we don't
    words = None if dangling else bash_words(text)
    if words is None:  # not shell words (unclosed quote, dangling \\): whitespace split
        assert dangling or bash_words(text + "'") is not None or \
            bash_words(text + '"') is not None, text
        words = text.split()
    assert reference_words(text) == words
    body = " ".join(f"<${i}>" for i in range(1, len(words) + 1))
    assert expand(command(body), arguments) == " ".join(f"<{w}>" for w in words)


def quoted(word: str, style: int) -> str:
    """`word` as one shell word, in one of three quotings written out here (not shlex's).
    Typed arguments are stripped before splitting, so an escaped trailing blank would lose
    its blank and leave a dangling backslash: such a word is single-quoted instead."""
    if style == 0 or word[-1:].isspace():
        return "'" + word.replace("'", "'\"'\"'") + "'"
    if style == 1:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "".join("\\" + ch for ch in word)


@pytest.mark.parametrize("seed", range(100))
def test_quoted_words_reach_their_placeholders_intact(seed: int) -> None:
    rng = random.Random(seed)
    words = [_random_arguments(rng) for _ in range(rng.randint(1, 5))]
    body = " ".join(f"<${i}>" for i in range(1, len(words) + 1))
    typed = " ".join(quoted(word, rng.randrange(3)) for word in words)
    assert expand(command(body), typed) == " ".join(f"<{w}>" for w in words)


# ---- parsing what the user typed ---------------------------------------------------------


@pytest.mark.parametrize(("text", "parsed"), [
    ("/help", ("help", "")),
    ("/review 123 high", ("review", "123 high")),
    ("/frontend:component Button --dark", ("frontend:component", "Button --dark")),
    ("/v1.2_x-y", ("v1.2_x-y", "")),
    ("/cmd   spaced   out   ", ("cmd", "spaced   out")),
    ("/cmd\nsecond line\nthird", ("cmd", "second line\nthird")),
    ("/cmd\targ", ("cmd", "arg")),
    ("/usr", ("usr", "")),  # looks like a path, but only the caller knows the commands
    ("/tmp/x", None),
    ("/tmp/x and more", None),
    ("/ foo", None),
    ("/", None),
    ("", None),
    ("help", None),
    (" /help", None),
    ("//x", None),
    ("/..", None),
    ("/.config", None),
    ("/café", None),
    ("/a(b)", None),
])
def test_parse_slash(text: str, parsed: tuple[str, str] | None) -> None:
    assert parse_slash(text) == parsed


def test_parse_slash_then_expand_round_trip(dirs: tuple[Path, Path]) -> None:
    cwd, config = dirs
    project_file(cwd, "git/fix.md", "---\nargument-hint: <issue>\n---\nFix #$1: $ARGUMENTS\n")
    parsed = parse_slash('/git:fix 42 "the login bug"')
    assert parsed is not None
    name, arguments = parsed
    assert expand(load_commands(cwd, config)[name], arguments) == (
        'Fix #42: 42 "the login bug"')
