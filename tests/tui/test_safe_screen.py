"""Every path from a string to the terminal passes the sanitiser, by construction: the
renderer sanitises whatever it renders, the scrollback's one door sanitises whatever it is
handed, and every window of the live region is made through `layout.shown`. These check
the construction (so a new screen cannot forget it) and the results."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest
from rich.console import Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from wisp.tui import layout, terminal
from wisp.tui.dialog import Picker, command_text
from wisp.tui.render import Renderer

TUI = Path(__file__).resolve().parents[2] / "src" / "wisp" / "tui"
HOSTILE = "x\x1b]0;PWNED\x07\x1b[2K\u202eevil\r\x9b1A"
ESCAPE = re.compile(r"\x1b(?!\[[0-9;:]*m)")  # any escape but a colour (SGR)


def calls_in(name: str) -> list[tuple[str, str]]:
    """(file, enclosing function) of every call to `name` in wisp.tui."""
    found = []
    for path in sorted(TUI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                        node.func, "attr", None)) == name:
                    found.append((path.name, getattr(func, "name", "<module>")))
    return found


def innermost(found: list[tuple[str, str]]) -> set[tuple[str, str]]:
    return {pair for pair in found if pair[1] != "<module>"}


def test_windows_are_made_only_through_shown() -> None:
    assert innermost(calls_in("FormattedTextControl")) == {("layout.py", "shown")}
    assert innermost(calls_in("ANSI")) == {("layout.py", "safe_ansi")}


def terminal_writes() -> set[tuple[str, str]]:
    """(file, function) of every write to stdout/stderr or raw write to the output."""
    found = set()
    for path in sorted(TUI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                target = node.func if isinstance(node, ast.Call) else None
                if isinstance(target, ast.Name) and target.id == "print_formatted_text":
                    found.add((path.name, func.name))
                if not isinstance(target, ast.Attribute):
                    continue
                to_std = (target.attr == "write" and isinstance(target.value, ast.Attribute)
                          and target.value.attr in ("stdout", "stderr"))
                if to_std or target.attr in ("write_raw", "print_formatted_text"):
                    found.add((path.name, func.name))
    return found


def test_raw_writes_to_the_terminal_happen_in_known_places_only() -> None:
    """The scrollback's door, and wisp's own lines before the UI starts (the welcome line,
    its folder and model made safe; the trust dialog's refusal, a fixed sentence),
    /clear's erase sequences (constants, no text in them), and /copy's clipboard sequence
    (its text base64-encoded: no escape can ride in it)."""
    assert terminal_writes() == {("terminal.py", "print_above"), ("trust_dialog.py", "settle"),
                                 ("screen.py", "_welcome"), ("screen.py", "clear_screen"),
                                 ("screen.py", "copy_to_clipboard")}


@pytest.mark.parametrize("item", [
    Text(HOSTILE), Markdown(HOSTILE), Panel(HOSTILE), Group(Text("a"), HOSTILE),
])
def test_the_renderer_sanitises_whatever_it_renders(item: object) -> None:
    out = Renderer(60, {}).ansi(item)  # type: ignore[arg-type]
    assert ESCAPE.search(out) is None and "\r" not in out and "\u202e" not in out
    assert "␛]0;PWNED" in out


def test_a_table_cell_is_sanitised_too() -> None:
    table = Table()
    table.add_column("c")
    table.add_row(HOSTILE)
    assert ESCAPE.search(Renderer(60, {}).ansi(table)) is None


def test_the_scrollback_door_passes_colours_only(capsys: pytest.CaptureFixture[str]) -> None:
    class NotRunning:
        is_running = False

    terminal.print_above(NotRunning(), None, f"\x1b[1mbold\x1b[0m {HOSTILE}\n")  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert out.startswith("\x1b[1mbold\x1b[0m x␛]0;PWNED␇␛[2K")
    assert ESCAPE.search(out) is None


def test_a_window_drops_control_characters_and_zero_width_escapes() -> None:
    control = layout.shown(lambda: [("", HOSTILE), ("[ZeroWidthEscape]", "\x1b]0;T\x07")])
    fragments = control.text()  # type: ignore[operator]
    assert [text for _style, text, *_ in fragments] == ["x␛]0;PWNED␇␛[2K⟨U+202E⟩evil␍\ufffd1A"]


# The permission dialog in any height ----------------------------------------------------


def picker(title: Text) -> Picker:
    return Picker(Group(Text("Bash wants to run"), title),
                  ["Yes", "Yes, and don't ask again", "No"], footer="rule: " + "x, " * 200,
                  refusal=2)


def test_padding_with_blank_lines_is_counted_not_drawn() -> None:
    shown = command_text("echo safe" + "\n" * 60 + "touch PWNED").plain
    assert shown == "echo safe\n  ⋮ 59 blank lines\ntouch PWNED"
    assert command_text("a\n\nb").plain == "a\n\nb"


@pytest.mark.parametrize("rows", range(1, 30))
@pytest.mark.parametrize("width", [20, 80])
def test_the_choices_stay_and_a_cut_dialog_starts_on_no(rows: int, width: int) -> None:
    async def check() -> None:
        command = command_text("\n".join(f"echo {i}" for i in range(60)) + "\ntouch PWNED")
        dialog = picker(command)
        lines = dialog.render(Renderer(width, {}), rows).rstrip("\n").split("\n")
        text = "\n".join(lines)
        assert dialog.cut
        assert dialog.selected == 2  # "No": not all of the command was shown
        for choice in ("1. Yes", "3. No"):
            assert choice in text.replace("\n", ""), (rows, text)
        if rows >= 8:
            assert len(lines) <= rows, text
            assert "touch PWNED" in text and "more lines" in text
        dialog.move(-2)  # the user's own choice is kept
        dialog.render(Renderer(width, {}), rows)
        assert dialog.selected == 0

    asyncio.run(check())


def test_a_dialog_that_fits_is_whole_and_starts_on_yes() -> None:
    async def check() -> None:
        dialog = picker(command_text("echo safe" + "\n" * 60 + "touch PWNED"))
        text = dialog.render(Renderer(80, {}), 30)
        assert not dialog.cut and dialog.selected == 0
        assert "echo safe" in text and "touch PWNED" in text

    asyncio.run(check())
