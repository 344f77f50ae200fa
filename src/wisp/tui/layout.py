"""The live region: everything prompt_toolkit redraws. From top to bottom: the streaming
tail of the answer (or the thinking line), the spinner, queued prompts, then either a
dialog or the input line with its completion menu, and the footer.

The streaming tail is rendered by rich into ANSI once per redraw (not per token) and cut
to the last lines that fit, so the region never outgrows the screen; finished pieces have
already gone to the scrollback (see `stream_text`).

Every text window is made through `shown`, which passes what it draws through
`wisp.textsafe` (ANSI text keeps its colours only, plain fragments lose every control
character): a model name, a queued prompt or a dialog can hold a repository's or a
model's bytes, and none of them may drive the terminal. A test checks that no window is
made another way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import SearchToolbar

from wisp.textsafe import safe, terminal_safe

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp
    from wisp.tui.stream_text import Piece

Drawn = StyleAndTextTuples | ANSI

STYLE = Style.from_dict({
    "footer": "fg:ansibrightblack",
    "footer.mode": "fg:ansimagenta",
    "prompt": "bold",
    "queued": "fg:ansibrightblack italic",
    "hint": "fg:ansiyellow",
    "completion-menu": "bg:ansibrightblack fg:ansiwhite",
})
MODE_LABELS = {
    "default": "",
    "acceptEdits": "⏵⏵ accept edits on",
    "plan": "⏸ plan mode on",
    "bypassPermissions": "⏵⏵ bypass permissions on",
    "dontAsk": "don't ask on",
}


class LiveTail:
    """The streaming tail rendered for the current width, memoised between redraws."""

    def __init__(self, app: TuiApp) -> None:
        self.app = app
        self._key: tuple[int, int] = (0, 0)  # the size it was rendered for
        self._text = ""
        self._fragments = safe_ansi("")  # parsed once per frame, not once per key

    def text(self) -> str:
        if not self.app.loaded.is_set():
            return ""
        size = self.app.output.get_size()
        if not self.app.tail_due and self._key == (size.columns, size.rows):
            return self._text  # a key's redraw: the tail as the last frame drew it
        self.app.tail_due = False
        piece, thinking, depth = self.app.view.live_tail()
        self._key = (size.columns, size.rows)
        self._text = self._render(piece, thinking, depth, size.columns,
                                  max(3, size.rows - 8))
        self._fragments = safe_ansi(self._text)
        return self._text

    def fragments(self) -> ANSI:
        self.text()
        return self._fragments

    def _render(self, piece: Piece | None, thinking: str, depth: int, width: int,
                rows: int) -> str:
        from wisp.tui import render

        renderer = render.Renderer(width, self.app.env)
        if thinking:
            last = render.safe(thinking.strip().rsplit("\n", 1)[-1])[-(width - 16):]
            return renderer.ansi(render.note(" " * depth * 4 + f"✻ Thinking… {last}"))
        if piece is None:
            group = self.app.view.live_group()  # Read/Grep/Glob calls held as one line
            if group is None:
                return ""
            line, depth = group
            return renderer.ansi(render.note(" " * depth * 4 + f"● {line}", "bold"))
        if piece.kind == "code":
            # Plain while it streams: highlighting costs ~1 ms a line per frame, and the
            # lines are highlighted once they are committed, a dozen at a time.
            from rich.text import Text

            pad = " " * depth * 4
            code = Text("\n".join(pad + line for line in render.safe(piece.text).split("\n")),
                        style="dim")
            lines = renderer.ansi(code).rstrip("\n").split("\n")
        else:
            lines = renderer.piece(piece, depth * 4).rstrip("\n").split("\n")
        return "\n".join(lines[-rows:]) + "\n"


def shown(text: Callable[[], Drawn]) -> FormattedTextControl:
    """A control drawing `text()` made safe (see the module docstring). An ANSI text's
    fragments are checked too, since prompt_toolkit writes a "zero-width escape"
    fragment to the terminal as it is."""
    def draw() -> StyleAndTextTuples:
        drawn = text()
        fragments = drawn.__pt_formatted_text__() if isinstance(drawn, ANSI) else drawn
        return [(fragment[0], safe(fragment[1]), *fragment[2:])
                for fragment in fragments if "ZeroWidthEscape" not in fragment[0]]
    return FormattedTextControl(draw)


def safe_ansi(text: str) -> ANSI:
    """prompt_toolkit's ANSI reader of `text` with only its colour sequences left."""
    return ANSI(terminal_safe(text))


def _spinner(app: TuiApp) -> StyleAndTextTuples:
    if app.busy_since is None:
        return []
    seconds = time.monotonic() - app.busy_since
    frame = "✻✳✢·✢✳"[int(seconds * 10) % 6]
    tokens = app.view.output_tokens
    shown = f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
    waiting = " · waiting for your answer" if app.dialog is not None else " · esc to interrupt"
    return [("fg:ansiyellow", f"{frame} Working… "),
            ("fg:ansibrightblack", f"({int(seconds)}s · ↓ {shown} tokens{waiting})")]


def _queued(app: TuiApp) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for text in app.queue:
        first = text.split("\n", 1)[0][:100]
        out.append(("class:queued", f"  ⏵ queued: {first}\n"))
    if app.queue:
        out.append(("class:queued", "  (↑ on an empty input edits the last queued prompt)"))
    return out


def _dialog(app: TuiApp) -> ANSI:
    """The dialog, cut to the rows the terminal has: its choices always stay on screen
    (see `Picker.render`)."""
    if app.dialog is None:
        return safe_ansi("")
    from wisp.tui import render

    renderer = render.Renderer(app.width(), app.env)
    rows = app.output.get_size().rows - 2 - (1 if app.busy_since is not None else 0) - (
        len(app.queue) + 1 if app.queue else 0)
    return safe_ansi(app.dialog.render(renderer, rows).rstrip("\n"))


def footer_text(app: TuiApp) -> StyleAndTextTuples:
    if not app.loaded.is_set():
        steps = app.early_mode_steps
        pending = f" · shift+tab ×{steps} applies once started" if steps else ""
        return [("class:footer", f"  {app.shown_model} · starting…{pending}")]
    session = app.runtime.session
    mode = MODE_LABELS.get(session.permission_mode, session.permission_mode)
    extra = _indicators(app)
    if app.status_text:  # the user's own status line stands for model, context and cost
        own: StyleAndTextTuples = [("class:footer", f"  {app.status_text} · "),
                                   ("class:footer.mode", mode or "default"), *extra]
        return [*own, ("class:hint", f"  {app.hint}")] if app.hint else own
    # From the fullest to the shortest: a narrow terminal drops words, never the line.
    for long_mode, cost, ctx in ((True, True, True), (False, True, True),
                                 (False, False, True), (False, False, False)):
        shown_mode = mode or ("default mode (shift+tab to change)" if long_mode
                              else "default")
        parts: StyleAndTextTuples = [("class:footer", f"  {session.model} · "),
                                     ("class:footer.mode", shown_mode)]
        if ctx:
            parts.append(("class:footer", f" · ctx {context_percent(app)}"))
        if cost:
            parts.append(("class:footer", f" · ${session.usage.cost_usd:.4f}"))
        parts.extend(extra)
        if sum(len(text) for _, text, *_ in parts) <= app.width():
            break
    if app.hint:
        parts.append(("class:hint", f"  {app.hint}"))
    return parts


def _indicators(app: TuiApp) -> StyleAndTextTuples:
    """Short states worth a glance: background tasks, shell mode for a `!` line."""
    out: StyleAndTextTuples = []
    running = len(app.view.background)
    if running:
        out.append(("class:footer.mode",
                    f" · {running} background task{'s' if running != 1 else ''} (ctrl+t)"))
    if app.input.text.startswith("!"):
        out.append(("class:hint", " · ! shell mode"))
    return out


def context_percent(app: TuiApp) -> str:
    """How full the window was at the latest model call, e.g. "12%" (or "<1%")."""
    from wisp.engine.compaction import context_tokens
    from wisp.models import catalog

    session = app.runtime.session
    used = context_tokens(session.last_usage) if session.last_usage else 0
    share = 100 * used / max(1, catalog.context_window(session.model))
    return "<1%" if 0 < share < 1 else f"{min(100, round(share))}%"


SHORTCUTS = (
    ("!", "run a shell command"), ("/", "commands"), ("@", "attach a file"),
    ("\\ then enter", "a new line"), ("shift+tab", "change the permission mode"),
    ("esc", "interrupt"), ("esc esc", "clear the input, or rewind"),
    ("ctrl+c twice", "exit"), ("ctrl+d", "exit"), ("ctrl+g", "edit the prompt in $EDITOR"),
    ("ctrl+o", "expand the last output"), ("ctrl+r", "search the history"),
    ("ctrl+t", "background tasks"),
)


def _shortcuts(app: TuiApp) -> StyleAndTextTuples:
    """Two columns when the terminal is wide enough, one otherwise."""
    cells = [f"{key:<14} {what}" for key, what in SHORTCUTS]
    width = max(len(cell) for cell in cells) + 2
    columns = 2 if app.width() >= 2 * width + 2 else 1
    rows = -(-len(cells) // columns)
    lines = ["  " + "".join(cells[r + c * rows].ljust(width)
                            for c in range(columns) if r + c * rows < len(cells)).rstrip()
             for r in range(rows)]
    return [("class:footer", "\n".join(lines))]


def _field(app: TuiApp) -> str:
    """The label of the dialog's text field: a form field's name, else the rule."""
    field = app.dialog.field if app.dialog is not None else None
    return f"{field}: " if field is not None else "rule: "


def _line_prefix(line: int, wrap: int) -> StyleAndTextTuples:
    return [("class:prompt", "❯ " if line == 0 and not wrap else "  ")]


def build_layout(app: TuiApp) -> Layout:
    tail = LiveTail(app)
    has_dialog = Condition(lambda: app.dialog is not None)
    editing_rule = Condition(lambda: app.dialog is not None and app.dialog.editing)
    search = SearchToolbar()
    input_window = Window(
        BufferControl(app.input, search_buffer_control=search.control,
                      preview_search=True),
        get_line_prefix=_line_prefix, wrap_lines=True, dont_extend_height=True,
        height=Dimension(min=1, max=12))
    from wisp.tui.keys import rule_buffer

    body = HSplit([
        ConditionalContainer(
            Window(shown(tail.fragments), dont_extend_height=True, wrap_lines=False),
            # Under a dialog the rows are the dialog's: its choices must stay on screen.
            filter=Condition(lambda: bool(tail.text())) & ~has_dialog),
        ConditionalContainer(
            Window(shown(lambda: _spinner(app)), dont_extend_height=True),
            filter=Condition(lambda: app.busy_since is not None)),
        ConditionalContainer(
            Window(shown(lambda: _queued(app)), dont_extend_height=True),
            filter=Condition(lambda: bool(app.queue))),
        ConditionalContainer(
            HSplit([
                Window(shown(lambda: _dialog(app)), dont_extend_height=True),
                ConditionalContainer(
                    Window(BufferControl(rule_buffer(app)), height=1,
                           get_line_prefix=lambda line, wrap: [("bold", _field(app))]),
                    filter=editing_rule),
            ]),
            filter=has_dialog),
        ConditionalContainer(
            HSplit([input_window, CompletionsMenu(max_height=8, scroll_offset=1), search]),
            filter=~has_dialog),
        ConditionalContainer(
            Window(shown(lambda: _shortcuts(app)), dont_extend_height=True),
            filter=Condition(lambda: app.show_shortcuts) & ~has_dialog),
        Window(shown(lambda: footer_text(app)), height=1, style="class:footer"),
    ])
    return Layout(body, focused_element=input_window)
