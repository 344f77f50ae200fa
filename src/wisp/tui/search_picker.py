"""A picker you type into: the /resume dialog. Typed keys go to a search line and narrow
the list; ↑↓ move, Enter picks, Esc cancels. Under the list, a preview of the
highlighted entry (for /resume, the session's last messages), in the rows left over.

It is a `Picker` (the live region draws it, `show_dialog` awaits it) whose `choices` are
the entries that match now; `takes_text` tells the key bindings that digits and letters
are search text here, not choices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from rich.console import Group
from rich.text import Text

from wisp.textsafe import safe_line
from wisp.tui.dialog import Picker
from wisp.tui.render import Renderer

T = TypeVar("T")
MIN_LIST_ROWS = 3  # entries shown before the preview gets any room
HELP = "type to search · ↑↓ choose · enter {verb} · esc cancel"


class SearchPicker(Picker, Generic[T]):
    takes_text = True

    def __init__(self, heading: str, entries: list[T], *, label: Callable[[T], str],
                 search: Callable[[list[T], str], list[T]],
                 preview: Callable[[T, int], list[str]], verb: str = "pick") -> None:
        super().__init__(Text(heading, style="bold"), [label(e) for e in entries],
                         footer=HELP.format(verb=verb))
        self.heading = heading
        self.entries = entries
        self.shown = entries  # those matching the query, in `choices` order
        self.query = ""
        self._label, self._search, self._preview = label, search, preview

    def type(self, text: str) -> None:
        self._refilter(self.query + text)

    def backspace(self) -> None:
        self._refilter(self.query[:-1])

    def _refilter(self, query: str) -> None:
        self.query = query
        self.shown = self._search(self.entries, query)
        self.choices = [self._label(e) for e in self.shown]
        self.selected = 0

    def move(self, step: int) -> None:
        if self.choices:
            super().move(step)

    def pick(self, index: int | None) -> None:
        if index is not None and not self.choices:
            return  # Enter on an empty list: nothing to pick, keep typing
        super().pick(index)

    def picked(self, index: int | None) -> T | None:
        return None if index is None or index >= len(self.shown) else self.shown[index]

    def render(self, renderer: Renderer, rows: int) -> str:
        """Heading, search line, the list (scrolled to keep the highlighted line in
        sight), the preview in the rows left, and the keys: at most `rows` rows, each
        cut to the width (a long title must not wrap and push the keys away)."""
        count = f" ({len(self.shown)} of {len(self.entries)})" if self.query else ""
        search = Text("⌕ ", style="dim")
        search.append(safe_line(self.query))
        search.append("█", style="dim")
        lines = [_row(self.heading + count, "bold"), search]
        room = max(1, rows - 3)  # heading, search line, footer
        list_rows = min(len(self.choices), max(MIN_LIST_ROWS, room // 2)) or 1
        lines += self._list(list_rows)
        left = room - list_rows - 1
        chosen = self.picked(self.selected)
        if chosen is not None and left >= 2:
            lines.append(_row(("─ preview " + "─" * renderer.width)[:renderer.width], "dim"))
            lines += [_row(line, "dim" if line.startswith(" ") else "")
                      for line in self._preview(chosen, renderer.width)[-(left - 1):]]
        lines.append(_row(self.footer, "dim"))
        for line in lines:
            line.no_wrap, line.overflow = True, "ellipsis"
        return renderer.ansi(Group(*lines))

    def _list(self, list_rows: int) -> list[Text]:
        if not self.choices:
            return [_row("  (no match)", "yellow")]
        first = min(max(0, self.selected - list_rows + 1),
                    max(0, len(self.choices) - list_rows))
        return [_row(("❯ " if i == self.selected else "  ") + self.choices[i],
                     "bold cyan" if i == self.selected else "")
                for i in range(first, min(len(self.choices), first + list_rows))]


def _row(text: str, style: str) -> Text:
    return Text(safe_line(text), style=style)
