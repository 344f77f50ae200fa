"""A mistyped flag is an error, as the reference's are; every flag the reference CLI
accepts still is, those wisp does not implement with one warning and their own arity.
The real `wisp` process against the scripted Messages API."""

from __future__ import annotations

import pytest

from wisp.cli.help import HELP
from wisp.testing import reply

# Every option of the reference CLI's --help (Claude Code 2.1.332), with a value where
# it takes one, plus the three it accepts without listing them (--max-turns,
# --permission-prompt-tool, --system-prompt-file).
REFERENCE_OPTIONS: list[tuple[str, ...]] = [
    ("--add-dir", "/tmp"), ("--agent", "reviewer"), ("--agents", "{}"),
    ("--allow-dangerously-skip-permissions",), ("--allowedTools", "Read"),
    ("--allowed-tools", "Read"), ("--append-system-prompt", "more"),
    ("--autocompact", "auto"), ("--ax-screen-reader",), ("--bg",), ("--background",),
    ("--bare",), ("--betas", "b-1"), ("--brief",), ("--chrome",), ("--cloud", "c"),
    ("-c",), ("--continue",), ("--dangerously-skip-permissions",), ("-d",), ("--debug",),
    ("--debug-file", "/tmp/debug.log"), ("--desktop",), ("--disable-slash-commands",),
    ("--disallowedTools", "Write"), ("--disallowed-tools", "Write"), ("--effort", "low"),
    ("--environment", "env_1"), ("--exclude-dynamic-system-prompt-sections",),
    ("--fallback-model", "sonnet"), ("--file", "file_a:doc.txt"), ("--fork-session",),
    ("--forward-subagent-text",), ("--from-pr", "12"), ("--ide",),
    ("--include-hook-events",), ("--include-partial-messages",), ("--input-format", "text"),
    ("--json-schema", "{}"), ("--max-budget-usd", "1"), ("--mcp-config", "{}"),
    ("--model", "opus"), ("-n", "name"), ("--name", "name"), ("--no-chrome",),
    ("--no-session-persistence",), ("--output-format", "text"),
    ("--permission-mode", "plan"), ("--permission-prompts", "host"),
    ("--plugin-dir", "/tmp"), ("--plugin-url", "https://example.com/p.zip"), ("-p",),
    ("--print",), ("--prompt-suggestions", "true"), ("--remote-control", "rc"),
    ("--remote-control-session-name-prefix", "box"), ("--replay-user-messages",),
    ("--restricted",), ("-r", "abc"), ("--resume", "abc"), ("--safe-mode",),
    ("--session-id", "1b0e7e1c-0000-4000-8000-000000000001"), ("--setting-sources", "user"),
    ("--settings", "{}"), ("--strict-mcp-config",), ("--system-prompt", "S"),
    ("--system-prompt-snapshot", "on"), ("--teleport", "t"), ("--tmux",), ("--tools", "Read"),
    ("--verbose",), ("-w", "wt"), ("--worktree", "wt"),
    ("--max-turns", "3"), ("--permission-prompt-tool", "stdio"),
    ("--system-prompt-file", "/dev/null"),
]
# Those wisp does not implement. The prompt comes right after a flag that takes no
# value, which must not take it.
IGNORED: list[tuple[str, ...]] = [
    ("--agent", "reviewer"), ("--autocompact", "auto"), ("--ax-screen-reader",), ("--bg",),
    ("--background",), ("--bare",), ("--brief",), ("--chrome",), ("--no-chrome",),
    ("--cloud", "c"), ("-d",), ("--debug=api",), ("--debug-file", "{tmp}/debug.log"),
    ("--desktop",), ("--disable-slash-commands",), ("--environment", "env_1"),
    ("--exclude-dynamic-system-prompt-sections",), ("--file", "file_a:doc.txt"),
    ("--from-pr", "12"), ("--ide",), ("-n", "name"), ("--name", "name"),
    ("--permission-prompts", "host"), ("--plugin-url", "https://example.com/p.zip"),
    ("--prompt-suggestions", "true"), ("--remote-control", "rc"), ("--rc", "rc"),
    ("--remote-control-session-name-prefix", "box"), ("--restricted",), ("--safe-mode",),
    ("--system-prompt-snapshot", "on"), ("--teleport", "t"), ("-w", "wt"),
    ("--worktree", "wt"), ("--tmux",),
]


def test_a_mistyped_flag_exits_1_with_the_closest_match(wisp, server):
    run = wisp("--permision-mode", "acceptEdits", "-p", "hi")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == ("error: unknown option '--permision-mode'\n"
                          "(Did you mean --permission-mode?)\n")
    assert server.requests == []


@pytest.mark.parametrize(("argv", "says"), [
    (["-p", "hi", "--frobnicate"], "error: unknown option '--frobnicate'\n"),
    (["-p", "hi", "--outptu-format=json"],
     "error: unknown option '--outptu-format'\n(Did you mean --output-format?)\n"),
    (["-px", "hi"], "error: unknown option '-x'\n"),  # short flags get no guess
    (["-p", "--modle", "opus", "hi"],
     "error: unknown option '--modle'\n(Did you mean --model?)\n"),
])
def test_unknown_flags_in_any_spelling(wisp, server, argv, says):
    run = wisp(*argv)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", says)
    assert server.requests == []


def test_short_flags_combine_as_in_the_reference(wisp, server):
    server.script(reply.text("ok"))
    run = wisp("-pc", "hi")  # -p -c: nothing to continue, so a new session
    assert (run.returncode, run.stdout, run.stderr) == (0, "ok\n", "")


def test_every_reference_option_is_accepted(wisp, server):
    """--help after them all: it answers only once every option before it has parsed."""
    argv = [token for option in REFERENCE_OPTIONS for token in option]
    run = wisp(*argv, "--help")
    assert (run.returncode, run.stderr, run.stdout) == (0, "", HELP)
    bad = wisp(*argv, "--no-such-option", "--help")
    assert bad.returncode == 1 and "unknown option '--no-such-option'" in bad.stderr


def test_reference_options_wisp_ignores_warn_once_and_keep_the_prompt(wisp, server):
    server.script(reply.text("done"))
    argv = [token.replace("{tmp}", str(wisp.cwd)) for option in IGNORED for token in option]
    run = wisp("-p", *argv, "the prompt")
    assert (run.returncode, run.stdout) == (0, "done\n")
    [request] = server.requests
    assert request.body["messages"][-1]["content"] == "the prompt"
    names = dict.fromkeys(option[0].partition("=")[0] for option in IGNORED)
    assert run.stderr == f"wisp: warning: ignoring options wisp does not support: " \
                         f"{', '.join(names)}\n"


@pytest.mark.parametrize("option", [("--cloud",), ("--teleport",), ("--worktree",)])
def test_an_optional_value_is_not_taken_from_a_following_flag(wisp, server, option):
    server.script(reply.text("done"))
    run = wisp(*option, "-p", "the prompt")
    assert run.returncode == 0
    assert server.requests[0].body["messages"][-1]["content"] == "the prompt"


def test_a_value_flag_wisp_ignores_still_needs_its_value(wisp, server):
    run = wisp("-p", "hi", "--name")
    assert (run.returncode, run.stderr) == (1, "Error: option '--name' argument missing\n")
    assert server.requests == []
