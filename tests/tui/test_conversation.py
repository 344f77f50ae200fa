"""The conversation as the terminal UI shows it, in real tmux: streamed answers, Markdown,
thinking, tool calls and their results, subagents, long answers in the scrollback,
resizing, NO_COLOR, and tool output that is not valid UTF-8, huge, or full of escape
sequences."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.tui.harness import POLL_S, Terminal, TuiSetup
from wisp.testing import reply

SPINNER = r"Working… \(\d+s · ↓ \d+(\.\d)?k? tokens"
# A generous bound for "typing stays responsive": the UI redraws at ≤ 30 fps, so a key
# normally shows within ~50 ms; the suite runs on a noisy 2-core machine beside other
# tmux-driven tests (pytest-xdist), so only a freeze or per-token slowdown fails this.
KEY_ECHO_BOUND_S = 1.0


# Helpers ---------------------------------------------------------------------------------

def _normalised(text: str) -> str:
    """Whitespace collapsed, so text wrapped by the terminal compares with the source."""
    return " ".join(text.split())


def _key_echo_seconds(term: Terminal, char: str, timeout: float = 10) -> float:
    """Types one more `char` and returns how long until the input line shows it."""
    current = re.search(rf"^❯ ({re.escape(char)}*)$", term.screen(), re.MULTILINE)
    want = (len(current.group(1)) if current else 0) + 1
    pattern = re.compile(rf"^❯ {re.escape(char)}{{{want}}}$", re.MULTILINE)
    start = time.monotonic()
    term.type(char)
    while True:
        screen = term.screen()
        elapsed = time.monotonic() - start
        if pattern.search(screen):
            return elapsed
        assert elapsed < timeout, f"typed {char!r} never showed; screen:\n{screen}"
        time.sleep(POLL_S / 4)


_COLOUR_PARAMS = {*range(30, 38), *range(40, 48), *range(90, 98), *range(100, 108)}


def _colour_sgr(ansi: str) -> list[str]:
    """The SGR sequences in `ansi` that set a foreground or background colour (basic,
    bright, 256-colour or truecolor); attributes such as bold, dim or reverse are not
    colours."""
    found = []
    for match in re.finditer(r"\x1b\[([0-9;:]*)m", ansi):
        params = {int(p) for p in re.split(r"[;:]", match.group(1)) if p.isdigit()}
        if params & {38, 48, *_COLOUR_PARAMS}:
            found.append(match.group(0))
    return found


def _sets_red(ansi: str) -> bool:
    for match in re.finditer(r"\x1b\[([0-9;:]*)m", ansi):
        params = [int(p) if p.isdigit() else 0 for p in re.split(r"[;:]", match.group(1))]
        i = 0
        while i < len(params):
            if params[i] in (38, 48):  # extended colour: skip its arguments
                i += 5 if i + 1 < len(params) and params[i + 1] == 2 else 3
                continue
            if params[i] in (31, 91):
                return True
            i += 1
    return False


# 1. Streaming ------------------------------------------------------------------------------

def test_answer_streams_with_spinner_before_it_is_whole(tui: TuiSetup) -> None:
    paragraphs = [f"Paragraph {n:02d} tells a small part of the story, one after another."
                  for n in range(1, 13)]
    # ~30 deltas, 0.2 s apart: about six seconds from the first word to the last.
    tui.server.script(reply.slow("\n\n".join(paragraphs), 0.2, chunks=30))
    term = tui.terminal()
    term.ready()
    term.submit("tell the story")
    # One screen with the start of the answer and the spinner (elapsed seconds, tokens),
    # while the end of the answer has not arrived yet.
    screen = term.wait_for(rf"(?s)Paragraph 01 tells.*{SPINNER}", timeout=15)
    assert "Paragraph 12" not in term.scrollback()
    assert "Paragraph 12" not in screen
    term.wait_for(r"Paragraph 12 tells a small part of the story, one after another\.",
                  timeout=20)
    screen = term.ready(timeout=10)
    assert "Working…" not in screen
    whole = _normalised(term.scrollback())
    for paragraph in paragraphs:
        assert whole.count(paragraph) == 1, paragraph


# 2. Markdown -------------------------------------------------------------------------------

def test_markdown_is_rendered(tui: TuiSetup) -> None:
    answer = ("## Results heading\n\n"
              "This is **very important** and *subtle*.\n\n"
              "- first bullet item\n- second bullet item\n\n"
              "1. step one\n2. step two\n\n"
              "```python\ndef greet(name):\n    return f'hi {name}'\n```\n\n"
              "After the code.")
    tui.server.script(reply.text(answer))
    term = tui.terminal()
    term.ready()
    term.submit("format something")
    term.wait_for("After the code")
    screen = term.ready()
    assert "Results heading" in screen
    assert "## Results" not in screen  # the heading's marks are gone
    assert "This is very important and subtle." in screen
    assert "**" not in screen
    assert re.search(r"^\s*• first bullet item$", screen, re.MULTILINE), screen
    assert re.search(r"^\s*• second bullet item$", screen, re.MULTILINE), screen
    assert re.search(r"^\s*1\.? step one$", screen, re.MULTILINE), screen
    assert re.search(r"^\s*2\.? step two$", screen, re.MULTILINE), screen
    # The fenced code is shown as code: its lines, indentation kept, without the fences.
    assert "def greet(name):" in screen
    assert re.search(r"^\s*    return f'hi \{name\}'", screen, re.MULTILINE), screen
    assert "```" not in screen


# 3. Thinking -------------------------------------------------------------------------------

def test_thinking_is_collapsed_and_ctrl_o_shows_it_whole(tui: TuiSetup) -> None:
    thought = ("First I consider the question.\n"
               "Second hidden line of careful thought.\n"
               "Third hidden line reaches a conclusion.")
    tui.server.script(reply.thinking(thought, "THE-ANSWER is ready."))
    term = tui.terminal()
    term.ready()
    term.submit("think about it")
    term.wait_for("THE-ANSWER is ready")
    screen = term.ready()
    # Collapsed to how long it took; the thought is one ctrl+o away.
    assert re.search(r"✻ Thought for \d+s \(ctrl\+o to expand\)", screen), screen
    assert "First I consider the question" not in screen
    assert "Second hidden line" not in screen
    assert "Third hidden line" not in screen
    term.keys("C-o")
    screen = term.wait_for("Third hidden line reaches a conclusion")
    assert "Second hidden line of careful thought." in screen
    assert "First I consider the question." in screen


# 4. Tool calls -----------------------------------------------------------------------------

def test_bash_call_shows_command_and_first_lines_of_its_result(tui: TuiSetup) -> None:
    for name in ("alpha.txt", "beta.txt"):
        (tui.cwd / name).write_text("x\n")
    tui.server.script(reply.tool_use("Bash", {"command": "ls -la"}),
                      reply.text("LISTED the files."))
    term = tui.terminal()
    term.ready()
    term.submit("list files")
    term.wait_for("LISTED the files")
    screen = term.ready()
    assert re.search(r"^● Bash\(ls -la\)$", screen, re.MULTILINE), screen
    # `ls -la` prints "total N", then ".", "..", then the files: the preview is the
    # first four lines, the rest is counted.
    assert re.search(r"^  ⎿  total \d+", screen, re.MULTILINE), screen
    assert "alpha.txt" in screen
    assert "beta.txt" not in screen
    assert re.search(r"… \+1 lines \(ctrl\+o to expand\)", screen), screen


def test_a_read_is_summarised_and_ctrl_o_shows_it_whole(tui: TuiSetup) -> None:
    notes = tui.cwd / "notes.txt"
    notes.write_text("".join(f"note line {n:02d}\n" for n in range(1, 13)))
    tui.server.script(reply.tool_use("Read", {"file_path": str(notes)}),
                      reply.text("READ-DONE."))
    term = tui.terminal()
    term.ready()
    term.submit("read the notes")
    term.wait_for("READ-DONE")
    screen = term.ready()
    assert "● Read(notes.txt)" in screen  # relative to the project
    # A read is summarised (the model's numbered text is not for a person) ...
    assert re.search(r"⎿\s+Read 12 lines \(ctrl\+o to expand\)", screen), screen
    assert "note line 01" not in screen
    term.keys("C-o")
    screen = term.wait_for("note line 12")
    for n in range(1, 13):
        assert f"note line {n:02d}" in screen


def test_failing_tool_result_is_marked_error(tui: TuiSetup) -> None:
    tui.server.script(
        reply.tool_use("Bash", {"command": "echo broken-output; exit 3"}),
        reply.text("FAILED-NOTED."))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready()
    term.submit("run the failing thing")
    term.wait_for("FAILED-NOTED")
    screen = term.ready()
    assert "● Bash(echo broken-output; exit 3)" in screen
    assert re.search(r"^  ⎿  Error: broken-output$", screen, re.MULTILINE), screen
    assert "Exit code 3" in screen
    # The failure is also shown in red.
    coloured = term.screen(colors=True)
    line = next(ln for ln in coloured.split("\n") if "broken-output" in ln and "Error" in ln)
    assert _sets_red(line), repr(line)


# 5. Subagents ------------------------------------------------------------------------------

def test_subagent_work_is_indented_under_the_task_call(tui: TuiSetup) -> None:
    notes = tui.cwd / "sub.txt"
    notes.write_text("sub note one\nsub note two\n")
    tui.server.script(
        reply.tool_use("Task", {"description": "inspect the notes",
                                "prompt": "Read sub.txt and report what it says.",
                                "subagent_type": "general-purpose"}),
        # The subagent's own model calls, served next by the same server.
        reply.tool_use("Read", {"file_path": str(notes)}),
        reply.text("SUBREPORT: two notes."),
        reply.text("MAIN-DONE."))
    term = tui.terminal()
    term.ready()
    term.submit("delegate it")
    term.wait_for("MAIN-DONE")
    screen = term.ready()
    lines = screen.split("\n")
    task = next(i for i, ln in enumerate(lines) if ln == "● Task(inspect the notes)")
    # The path relative to the project, as every tool header shows it.
    read = next(i for i, ln in enumerate(lines) if ln == "    ● Read(sub.txt)")
    assert task < read, screen
    assert re.search(r"^    ⎿ general-purpose: inspect the notes$", screen, re.MULTILINE), screen
    # The subagent's tool result (its summary) and its answer are indented too.
    assert re.search(r"^      ⎿  Read 2 lines", screen, re.MULTILINE), screen
    assert re.search(r"^    SUBREPORT: two notes\.$", screen, re.MULTILINE), screen
    # The subagent's request carried the Task prompt.
    sub_request = tui.server.requests[1].body
    assert sub_request is not None
    assert "Read sub.txt and report" in str(sub_request["messages"][0]["content"])


# 6. A 10,000-token answer ------------------------------------------------------------------

def _long_markdown() -> tuple[str, list[str], list[str]]:
    """~40,000 characters: numbered paragraphs with a code block after every tenth."""
    parts, paragraphs, markers = [], [], []
    n = 0
    while sum(len(p) + 2 for p in parts) < 40_000:
        n += 1
        marker = f"Para-{n:03d}:"
        text = (f"{marker} this paragraph of the very long answer talks about subject {n}, "
                "repeating plain words so that it wraps across several lines of the "
                "terminal. Nothing here is special Markdown, only a lot of ordinary prose "
                "which the view must print into the scrollback exactly once.")
        parts.append(text)
        paragraphs.append(text)
        markers.append(marker)
        if n % 10 == 0:
            marker = f"block_{n:03d}"
            parts.append(f"```python\ndef {marker}():\n"
                         + "".join(f"    value_{i} = {i} * {n}\n" for i in range(6))
                         + "    return value_5\n```")
            markers.append(f"def {marker}():")
    return "\n\n".join(parts), paragraphs, markers


def test_ten_thousand_token_answer_streams_whole_and_typing_stays_responsive(
        tui: TuiSetup) -> None:
    answer, paragraphs, markers = _long_markdown()
    assert len(answer) >= 40_000
    # 200 deltas of ~200 characters, 50 ms apart: about ten seconds of streaming.
    tui.server.script(reply.slow(answer, 0.05, chunks=200))
    term = tui.terminal()
    term.ready()
    term.submit("write a very long answer")
    term.wait_for(SPINNER, timeout=15)
    latencies = []
    for n in (5, 25, 45, 65, 85):
        term.wait_for(rf"Para-{n:03d}:", timeout=30, where="scrollback")
        latencies.append(_key_echo_seconds(term, "x"))
        assert "Working…" in term.screen()  # measured while the answer still streams
    assert max(latencies) < KEY_ECHO_BOUND_S, latencies
    term.wait_for(re.escape(markers[-1]), timeout=40, where="scrollback")
    term.ready(timeout=20)
    assert re.search(r"^❯ x{5}$", term.screen(), re.MULTILINE)  # typed input kept
    term.keys("C-u")
    history = term.scrollback()
    for marker in markers:
        assert history.count(marker) == 1, (marker, history.count(marker))
    whole = _normalised(history)
    assert _normalised(paragraphs[0]) in whole
    assert _normalised(paragraphs[-1]) in whole


# 7. Scrollback -----------------------------------------------------------------------------

def test_scrollback_holds_every_line_of_a_long_answer_once(tui: TuiSetup) -> None:
    prose = "\n\n".join(f"L{n:03d} is a line of prose." for n in range(1, 151))
    code = "\n".join(f"L{n:03d} = 'a line of code'" for n in range(151, 301))
    tui.server.script(reply.text(f"{prose}\n\n```python\n{code}\n```\n\nTHE-END.", chunks=60))
    term = tui.terminal()
    term.ready()
    term.submit("three hundred lines please")
    term.wait_for("THE-END", timeout=20)
    term.ready()
    history = term.scrollback()
    counts = {n: len(re.findall(rf"\bL{n:03d}\b", history)) for n in range(1, 301)}
    wrong = {n: c for n, c in counts.items() if c != 1}
    assert not wrong, wrong
    # And in order.
    positions = [history.index(f"L{n:03d}") for n in range(1, 301)]
    assert positions == sorted(positions)


# 8. Resize ---------------------------------------------------------------------------------

def test_resize_keeps_working_without_duplicating_earlier_content(tui: TuiSetup) -> None:
    second = " ".join(f"beta{n:02d}" for n in range(1, 31))  # ~200 characters, one paragraph
    tui.server.script(reply.text("ALPHA-MARKER first answer."),
                      reply.text(f"BETA-MARKER {second}"))
    term = tui.terminal(width=100, height=30)
    term.ready()
    term.submit("first question")
    term.wait_for("ALPHA-MARKER")
    term.ready()
    term.resize(40, 10)
    # tmux resizes the pty a moment after the window: wait until wisp has drawn its live
    # region for 40 columns (the footer in its short form, which fits: not wrapped by
    # tmux, not cut).
    term.wait_for(r"^❯")
    term.wait_gone(r"default mode")
    term.wait_for(r"^  \S+ · default · ctx \S+$")
    term.resize(100, 30)
    term.wait_for(r"^  \S.* · ctx \S+ · \$")  # the whole footer again: wisp saw 100 columns
    term.ready()
    term.submit("second question")
    term.wait_for("beta30")
    screen = term.ready()
    # The new answer is laid out for 100 columns, not the 40 of a moment ago.
    answer_lines = [ln for ln in screen.split("\n") if "beta" in ln]
    assert max(len(ln) for ln in answer_lines) > 60, screen
    history = term.scrollback()
    assert history.count("ALPHA-MARKER first answer.") == 1, history
    assert history.count("❯ first question") == 1, history
    assert history.count("BETA-MARKER") == 1, history
    assert history.count("beta30") == 1, history
    assert history.count("✻ wisp") == 1, history


# 9. NO_COLOR -------------------------------------------------------------------------------

COLOURFUL = ("Some **bold** words and a list:\n\n- one\n- two\n\n"
             "```python\ndef colourful(x):\n    return x + 1  # a comment\n```\n\nCOLOUR-END")


def _answer_screen(tui: TuiSetup, env: dict[str, str] | None) -> str:
    tui.server.script(reply.text(COLOURFUL))
    term = tui.terminal(env=env)
    term.ready()
    term.submit("show colours")
    term.wait_for("COLOUR-END")
    term.ready()
    return term.screen(colors=True)


def test_no_color_env_means_no_colour_sequences(tui: TuiSetup) -> None:
    screen = _answer_screen(tui, {"NO_COLOR": "1"})
    assert "def colourful(x):" in re.sub(r"\x1b\[[0-9;:]*m", "", screen)
    coloured = [(line, _colour_sgr(line)) for line in screen.split("\n") if _colour_sgr(line)]
    assert coloured == [], screen


def test_without_no_color_the_answer_has_colour(tui: TuiSetup) -> None:
    screen = _answer_screen(tui, None)
    assert _colour_sgr(screen), screen
    code_line = next(ln for ln in screen.split("\n") if "colourful" in ln)
    assert _colour_sgr(code_line), repr(code_line)  # the code is highlighted


# 10. Non-UTF-8 output ----------------------------------------------------------------------

def test_non_utf8_tool_output_shows_replacement_character(tui: TuiSetup) -> None:
    tui.server.script(reply.tool_use("Bash", {"command": r"printf 'caf\xe9 ok\n'"}),
                      reply.text("BYTES-DONE."))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready()
    term.submit("print latin-1")
    term.wait_for("BYTES-DONE")
    screen = term.ready()
    assert re.search(r"^  ⎿  caf\ufffd ok$", screen, re.MULTILINE), screen


# 11. Huge tool output ----------------------------------------------------------------------

def test_ten_megabyte_tool_output_is_shortened_and_saved(tui: TuiSetup) -> None:
    command = "head -c 10000000 /dev/zero | tr '\\0' 'x' | fold -w 100"
    tui.server.script(reply.tool_use("Bash", {"command": command}, id="toolu_big10mb"),
                      reply.text("BIG-DONE."),
                      reply.text("NEXT-ANSWER arrived."))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready()
    term.submit("print a lot")
    term.wait_for("BIG-DONE", timeout=30)
    screen = term.ready()
    flat = screen.replace("\n", "")  # a long path wraps across screen lines
    shown = re.search(r"… \+\d+ lines \(full output: (\S+)\)", flat)
    assert shown, screen
    # Only a preview is on the screen: a handful of lines of x, not thousands.
    assert screen.count("x" * 90) <= 8, screen

    # The model gets the head and tail (30,000 characters by default,
    # BASH_MAX_OUTPUT_LENGTH) with a marker naming the file that holds all ten megabytes;
    # the view points at that same file.
    result = tui.server.requests[1].body
    assert result is not None
    block = next(b for b in result["messages"][-1]["content"]
                 if isinstance(b, dict) and b.get("type") == "tool_result")
    sent = block["content"] if isinstance(block["content"], str) else "".join(
        b.get("text", "") for b in block["content"])
    assert len(sent) <= 30_000
    marker = re.search(r"characters truncated; all of it is in (\S+)\]", sent)
    assert marker, sent[:200]
    assert marker.group(1) == shown.group(1)
    whole = Path(marker.group(1)).read_text()
    assert whole == "\n".join(["x" * 100] * 100_000)  # fold adds no newline at the end

    # Still responsive: typing shows up at once, and the next prompt gets its answer.
    assert _key_echo_seconds(term, "y") < KEY_ECHO_BOUND_S
    term.keys("C-u")
    term.submit("and now?")
    term.wait_for("NEXT-ANSWER arrived", timeout=15)
    term.ready()


# 12. Escape sequences in tool output -------------------------------------------------------

def test_escape_sequences_in_tool_output_are_shown_not_obeyed(tui: TuiSetup) -> None:
    tui.server.script(
        reply.text("EARLIER-CONTENT-MARKER stays."),
        reply.tool_use("Bash", {"command": r"printf '\033[2J\033[31mred\n'"}),
        reply.text("ESCAPES-DONE."))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready()
    term.submit("first")
    term.wait_for("EARLIER-CONTENT-MARKER")
    term.ready()
    term.submit("print escapes")
    term.wait_for("ESCAPES-DONE")
    screen = term.ready()
    assert "EARLIER-CONTENT-MARKER stays." in screen  # \033[2J did not clear the screen
    assert "❯ first" in screen
    assert "␛[2J␛[31mred" in screen  # shown with visible control pictures
    coloured = term.screen(colors=True)
    assert not _sets_red(coloured), coloured  # \033[31m coloured nothing
    # Lines after the output are not red either (tmux keeps no stray red pen).
    after = coloured.split("ESCAPES-DONE", 1)[1]
    assert not _sets_red(after)
