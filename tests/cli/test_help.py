"""`wisp --help` and `wisp help`: what they print, that every flag they name is one wisp
acts on, and that printing them stays cheap. The real `wisp` process."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import wisp_command
from wisp.cli.help import HELP
from wisp.launch.argv import FLAGS
from wisp.testing import reply


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["help"]])
def test_help_is_printed_and_nothing_is_sent(wisp, server, argv):
    run = wisp(*argv)
    assert (run.returncode, run.stdout, run.stderr) == (0, HELP, "")
    assert server.requests == []


def test_wisp_help_serve_is_the_serve_help(wisp, server):
    run = wisp("help", "serve")
    direct = wisp("serve", "--help")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == direct.stdout and run.stdout.startswith("usage: wisp serve")
    assert "--port" in run.stdout and "--store" in run.stdout


@pytest.mark.parametrize("argv", [["-p", "help"], ["help", "me"]])
def test_help_among_other_words_is_a_prompt(wisp, server, argv):
    server.script(reply.text("here to help"))
    run = wisp(*argv)
    assert (run.returncode, run.stdout) == (0, "here to help\n")
    assert server.requests[0].body["messages"][-1]["content"] == " ".join(argv[1:] if
                                                                          argv[0] == "-p"
                                                                          else argv)


def test_every_flag_the_help_names_is_one_wisp_implements():
    text = HELP.replace("python -m", "")  # a Python option in an example
    named = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", text))
    assert named - set(FLAGS) == set()


@pytest.mark.parametrize("what", [
    "wisp serve", "--input-format stream-json --output-format stream-json", "-p, --print",
    "-c, --continue", "-r, --resume", "--fork-session", "--session-id", "--settings",
    "--setting-sources", "--mcp-config", "--add-dir", "--agents", "openai:<model>",
    "<provider>:<model>", "--probe", "--permission-mode", "acceptEdits", "bypassPermissions",
    "--allowedTools", "--disallowedTools", "python -m wisp.testing.server -- wisp -p hello",
])
def test_the_help_covers_every_mode_and_the_daily_flags(what):
    assert what in HELP


def test_help_imports_nothing_but_itself():
    done = subprocess.run([sys.executable, "-X", "importtime", *wisp_command()[1:], "--help"],
                          capture_output=True, text=True, check=True, timeout=30)
    wisp_modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                    if "| wisp" in line or "|   wisp" in line}
    assert {m for m in wisp_modules if m.startswith("wisp")} == {
        "wisp", "wisp.cli", "wisp.cli.main", "wisp.cli.help"}
    assert "asyncio" not in done.stderr
