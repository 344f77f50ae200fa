"""Key bindings of the terminal UI.

Input: Enter submits; `\\`+Enter, Alt+Enter, Ctrl+J and Shift+Enter (where the terminal
reports it) insert a newline; pastes keep their newlines, and a large one becomes a chip.
While the model works: Esc or Ctrl+C interrupt. Ctrl+C twice on an empty input, or Ctrl+D,
exits. Shift+Tab cycles the permission mode; Ctrl+R searches the history (prompt_toolkit's
own search); Ctrl+O expands pasted chips in the input, or else the last shortened output.
`?` on an empty input shows the shortcuts; Ctrl+G edits the prompt in $EDITOR.
Dialogs: digits pick, arrows and Enter pick the highlighted choice, Esc means No; in a
dialog with a search (/resume) typed keys are its search text; ← → change a setting
shown beside the choices (/model's effort).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.bindings.basic import load_basic_bindings
from prompt_toolkit.key_binding.bindings.emacs import (
    load_emacs_bindings,
    load_emacs_search_bindings,
)
from prompt_toolkit.key_binding.key_bindings import KeyBindingsBase
from prompt_toolkit.keys import Keys

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

DOUBLE_PRESS_S = 2.0
DOUBLE_ESC_S = 0.8
# Shift+Enter as terminals with extended key reporting send it (kitty/CSI-u and xterm's
# modifyOtherKeys): a newline, like Ctrl+J. prompt_toolkit has no key for it.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ANSI_SEQUENCES.setdefault(_sequence, Keys.ControlJ)

_RULE_BUFFERS: dict[int, Buffer] = {}


def rule_buffer(app: TuiApp) -> Buffer:
    """The text field where the permission dialog's rule is edited."""
    return _RULE_BUFFERS.setdefault(id(app), Buffer(multiline=False))


def key_bindings(app: TuiApp) -> KeyBindingsBase:
    return merge_key_bindings([
        load_basic_bindings(), load_emacs_bindings(), load_emacs_search_bindings(),
        _input_keys(app), _control_keys(app), _view_keys(app), _dialog_keys(app),
        _dialog_text_keys(app),
        _rule_keys(app)])


def _input_keys(app: TuiApp) -> KeyBindings:
    kb = KeyBindings()
    # While Ctrl+R searches, Enter and pastes belong to the search.
    no_dialog = Condition(lambda: app.dialog is None) & ~is_searching

    @kb.add("enter", filter=no_dialog)
    def _submit(event: KeyPressEvent) -> None:
        _enter_in_input(app)

    @kb.add("escape", "enter", filter=no_dialog)
    @kb.add("c-j", filter=no_dialog)
    def _newline(event: KeyPressEvent) -> None:
        app.input.insert_text("\n")

    @kb.add("escape", "/", filter=no_dialog)
    def _slash_after_esc(event: KeyPressEvent) -> None:
        """Esc then "/" typed fast enough to reach us together reads as Alt+/, which
        prompt_toolkit binds to completion: the "/" of "/exit" was lost. It is a slash."""
        app.input.insert_text("/")

    @kb.add(Keys.BracketedPaste, filter=no_dialog)
    def _paste(event: KeyPressEvent) -> None:
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        app.input.insert_text(app.pastes.chip_for(text) or text)

    @kb.add("?", filter=no_dialog & Condition(lambda: not app.input.text))
    def _shortcuts(event: KeyPressEvent) -> None:
        app.show_shortcuts = not app.show_shortcuts

    @kb.add("c-g", filter=no_dialog)
    def _editor(event: KeyPressEvent) -> None:
        """The prompt in $VISUAL/$EDITOR (prompt_toolkit's own: the terminal is handed
        over, and the file's text comes back into the input, not sent)."""
        app.show_shortcuts = False
        app.input.open_in_editor(validate_and_handle=False)

    @kb.add("up", filter=no_dialog & Condition(lambda: bool(app.queue) and not app.input.text))
    def _edit_queued(event: KeyPressEvent) -> None:
        app.input.text = app.queue.pop()
        app.input.cursor_position = len(app.input.text)

    return kb


def _enter_in_input(app: TuiApp) -> None:
    """Enter takes the highlighted completion, or continues a line ending in a
    backslash, or else submits the prompt."""
    buffer = app.input
    state = buffer.complete_state
    if state is not None and state.current_completion is not None:
        buffer.apply_completion(state.current_completion)
        return
    if buffer.document.text_before_cursor.endswith("\\"):
        buffer.delete_before_cursor(1)
        buffer.insert_text("\n")
        return
    text = buffer.text
    if text.strip():
        buffer.append_to_history()
    buffer.reset()
    app.hint = ""
    app.submit(text)


def _control_keys(app: TuiApp) -> KeyBindings:
    kb = KeyBindings()
    no_dialog = Condition(lambda: app.dialog is None)
    busy = Condition(lambda: app.interruptible)

    @kb.add("escape", filter=no_dialog & busy, eager=True)
    def _interrupt(event: KeyPressEvent) -> None:
        app.interrupt()

    @kb.add("escape", filter=no_dialog & ~busy & ~is_searching)
    def _esc_idle(event: KeyPressEvent) -> None:
        idle_escape(app)

    @kb.add("c-c", filter=no_dialog)
    def _ctrl_c(event: KeyPressEvent) -> None:
        if app.interruptible:
            app.interrupt()
        elif app.input.text:
            app.input.reset()
        elif time.monotonic() - app.last_ctrl_c < DOUBLE_PRESS_S:
            app.exit(0)
        else:
            app.last_ctrl_c = time.monotonic()
            app.hint = "press ctrl+c again to exit"

    @kb.add("c-d", filter=no_dialog)
    def _ctrl_d(event: KeyPressEvent) -> None:
        if not app.input.text:
            app.exit(0)
        else:
            app.input.delete()

    @kb.add("s-tab")
    def _mode(event: KeyPressEvent) -> None:
        app.cycle_mode()

    return kb


def idle_escape(app: TuiApp) -> None:
    """Esc closes the shortcuts; Esc twice clears a draft, or on an empty input opens the
    rewind picker."""
    now = time.monotonic()
    twice, app.last_esc = now - app.last_esc < DOUBLE_ESC_S, now
    if app.show_shortcuts:
        app.show_shortcuts = False
        return
    if not twice:
        app.hint = "esc again to clear" if app.input.text else ""
        return
    app.hint = ""
    app.last_esc = 0.0
    if app.input.text:
        app.input.reset(append_to_history=True)
    else:
        app.open_rewind()


def _view_keys(app: TuiApp) -> KeyBindings:
    kb = KeyBindings()
    no_dialog = Condition(lambda: app.dialog is None)

    @kb.add("c-t", filter=no_dialog)
    def _tasks(event: KeyPressEvent) -> None:
        if app.loaded.is_set():
            app.background(app.commands.run("/tasks"))

    @kb.add("c-o", filter=no_dialog)
    def _expand(event: KeyPressEvent) -> None:
        if app.pastes.has_chips(app.input.text):
            app.input.text = app.pastes.expand(app.input.text)
            app.input.cursor_position = len(app.input.text)
        else:
            app.view.verbose = True
            app.view.expand_last()

    return kb


def _dialog_keys(app: TuiApp) -> KeyBindings:
    kb = KeyBindings()
    choosing = Condition(lambda: app.dialog is not None and not app.dialog.editing)
    searching = Condition(lambda: app.dialog is not None and app.dialog.takes_text)

    for digit in "123456789":
        @kb.add(digit, filter=choosing & ~searching)
        def _pick(event: KeyPressEvent) -> None:
            _pick_numbered(app, event)

    @kb.add("up", filter=choosing)
    def _up(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.move(-1)

    @kb.add("down", filter=choosing)
    @kb.add("tab", filter=choosing)
    def _down(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.move(1)

    @kb.add("enter", filter=choosing)
    def _enter(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.pick(app.dialog.selected)

    @kb.add("escape", filter=choosing, eager=True)
    @kb.add("c-c", filter=choosing)
    def _no(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.pick(None)

    @kb.add(Keys.Any, filter=choosing)
    def _ignore(event: KeyPressEvent) -> None:
        """Other keys do nothing while a dialog waits (the input line is hidden), but
        go to the search of a dialog that has one."""
        assert app.dialog is not None
        text = "".join(k.data for k in event.key_sequence)
        if app.dialog.takes_text and text.isprintable():
            app.dialog.type(text)

    @kb.add("e", filter=choosing & ~searching
            & Condition(lambda: bool(app.permission.rules)))
    def _edit_rule(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        buffer = rule_buffer(app)
        buffer.text = ", ".join(app.permission.rules)
        buffer.cursor_position = len(buffer.text)
        app.dialog.editing = True
        event.app.layout.focus(buffer)

    return kb


def _pick_numbered(app: TuiApp, event: KeyPressEvent) -> None:
    """A digit picks the choice it numbers, if the dialog has that many."""
    assert app.dialog is not None
    index = int(event.key_sequence[0].key) - 1
    if index < len(app.dialog.choices):
        app.dialog.pick(index)


def _dialog_text_keys(app: TuiApp) -> KeyBindings:
    """Backspace in a dialog's search (the typing itself is `_ignore`'s), ← → for a
    setting beside the choices."""
    kb = KeyBindings()
    choosing = Condition(lambda: app.dialog is not None and not app.dialog.editing)
    searching = Condition(lambda: app.dialog is not None and app.dialog.takes_text)

    @kb.add("backspace", filter=choosing & searching)
    def _backspace(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.backspace()

    @kb.add("left", filter=choosing)
    @kb.add("right", filter=choosing)
    def _adjust(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.adjust(1 if event.key_sequence[0].key == Keys.Right else -1)

    return kb


def _rule_keys(app: TuiApp) -> KeyBindings:
    kb = KeyBindings()
    editing = Condition(lambda: app.dialog is not None and app.dialog.editing)

    @kb.add("enter", filter=editing)
    def _done(event: KeyPressEvent) -> None:
        from wisp.tui.permission import rules_footer
        from wisp.tui.rules import split_rules, validate_rule

        assert app.dialog is not None
        if app.dialog.field is not None:  # a text answer, not a rule
            app.dialog.text = rule_buffer(app).text
            app.dialog.pick(0)
            return
        rules = split_rules(rule_buffer(app).text)
        problems = [p for p in map(validate_rule, rules) if p] or (
            [] if rules else ["type at least one rule"])
        if problems:
            app.hint = problems[0]
            return
        app.hint = ""
        app.permission.rules = rules
        app.dialog.footer = rules_footer(rules)
        app.dialog.selected = 1
        app.dialog.moved = True  # the rule the user edited is the one they mean to save
        app.dialog.editing = False

    @kb.add("escape", filter=editing, eager=True)
    def _cancel(event: KeyPressEvent) -> None:
        assert app.dialog is not None
        app.dialog.editing = False
        if app.dialog.field is not None:
            app.dialog.pick(None)

    return kb

