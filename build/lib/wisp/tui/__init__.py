"""The interactive terminal UI: `wisp` with no `-p`.

Inline rendering (the design choice this package is built around): finished output is
printed once into the terminal's own scrollback, and only a small live region (the
streaming tail of an answer, the spinner, a dialog, the input line and the footer) is
redrawn by prompt_toolkit. So the terminal keeps the history (tmux scrollback works,
nothing is lost on resize), memory does not grow with the conversation, and a redraw costs
the same in minute one and hour eight. See `app.py` for the pieces.
"""
