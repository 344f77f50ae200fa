"""`wisp.textsafe`: every character a terminal would obey is shown instead."""

from __future__ import annotations

import re

from wisp.textsafe import safe, safe_line, terminal_safe

OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e"
                    r"\u2060-\u2064\u2066-\u2069\ufeff]")


def test_controls_and_invisible_reordering_characters_are_shown() -> None:
    hostile = "a\x1b]0;T\x07b\rc\x08\x9b2Kd\u202eevil\u2066x\ufeffy\x7f"
    shown = safe(hostile)
    assert OBEYED.search(shown) is None
    assert shown == "a␛]0;T␇b␍c␈\ufffd2Kd⟨U+202E⟩evil⟨U+2066⟩x⟨U+FEFF⟩y␡"


def test_text_people_write_is_unchanged() -> None:
    text = "naïve café\tcolumns\nnew line 👨\u200d👩\u200d👧 زبان\u200cها ✻ ⎿"
    assert safe(text) == text


def test_safe_line_keeps_one_line() -> None:
    assert safe_line("a\nb\tc\x1b") == "a ⏎ b c␛"


def test_terminal_safe_keeps_colours_only() -> None:
    coloured = "\x1b[1;31mred\x1b[0m plain \x1b[38;2;1;2;3mtrue\x1b[39m"
    assert terminal_safe(coloured) == coloured
    hostile = "\x1b[31mx\x1b]0;T\x07\x1b[2K\x1b[1A\x1b[?1049h\x1bPq\x1b\\"
    out = terminal_safe(hostile)
    assert re.findall(r"\x1b\[[0-9;:]*[A-Za-z]", out) == ["\x1b[31m"]
    assert out == "\x1b[31mx␛]0;T␇␛[2K␛[1A␛[?1049h␛Pq␛\\"


def test_warnings_on_stderr_show_what_a_repository_wrote() -> None:
    """Every diagnostic passes the sanitiser: a hook event or server name from a settings
    file cannot set the title of the terminal running `wisp -p`."""
    from wisp import diagnostics

    said: list[str] = []
    diagnostics.route_to(said.append)
    try:
        diagnostics.warn("wisp: warning: hooks.Bad\x1b]0;T\x07 is not a known hook event\n")
    finally:
        diagnostics.route_to(None)
    assert said == ["wisp: warning: hooks.Bad␛]0;T␇ is not a known hook event\n"]
