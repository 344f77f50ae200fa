"""What the input line does with text: completion of `/commands` and `@paths`, pasted
text kept whole behind a chip, files attached from `@path`, and the per-project history
file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from wisp.jsontypes import JSON
from wisp.textsafe import safe_line

CHIP_LINES = 12  # a paste with more lines than this (or CHIP_CHARS) becomes a chip
CHIP_CHARS = 2000
ATTACH_CAP = 256 * 1024  # bytes of one @file attached to a prompt
_CHIP = re.compile(r"\[pasted #(\d+): \d+ lines\]")
_AT_PATH = re.compile(r"(?<!\S)@(\S+)")
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv"}


def history_path(config_dir: Path, project: str) -> Path:
    return config_dir / "history" / f"{project}.txt"


class Pastes:
    """Large pastes shown as `[pasted #N: L lines]` in the input; the text is kept here
    and put back on submit (or with ctrl+o), so nothing is lost."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def chip_for(self, text: str) -> str | None:
        lines = text.count("\n") + 1
        if lines <= CHIP_LINES and len(text) <= CHIP_CHARS:
            return None
        number = len(self._texts) + 1
        self._texts[number] = text
        return f"[pasted #{number}: {lines} lines]"

    def expand(self, text: str) -> str:
        return _CHIP.sub(lambda m: self._texts.get(int(m.group(1)), m.group(0)), text)

    def has_chips(self, text: str) -> bool:
        return bool(_CHIP.search(text))


def with_attachments(text: str, cwd: Path) -> str | list[JSON]:
    """A prompt naming `@path` of a readable file carries the file's text with it."""
    blocks: list[JSON] = []
    for match in _AT_PATH.finditer(text):
        raw = match.group(1).rstrip(".,;:!?)")
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else cwd / path
        if not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(ATTACH_CAP + 1)
        except OSError:
            continue
        body = data[:ATTACH_CAP].decode("utf-8", "replace")
        cut = "\n[… cut: the file is longer]" if len(data) > ATTACH_CAP else ""
        blocks.append({"type": "text",
                       "text": f'<file path="{raw}">\n{body}{cut}\n</file>'})
    if not blocks:
        return text
    return [{"type": "text", "text": text}, *blocks]


class InputCompleter(Completer):
    """`/name` at the start of the input completes commands; `@partial` anywhere
    completes paths under the working folder."""

    def __init__(self, cwd: Path, commands: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.commands = commands  # name → description; updated by the app

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before and "\n" not in before:
            typed = before[1:]
            for name, description in sorted(self.commands.items()):
                if name.startswith(typed):
                    # Names and descriptions come from files a repository ships.
                    yield Completion(f"/{name}", start_position=-len(before),
                                     display=safe_line(f"/{name}"),
                                     display_meta=safe_line(description))
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _paths(self, typed: str) -> Iterable[Completion]:
        folder, _, prefix = typed.rpartition("/")
        base = Path(folder).expanduser() if folder else Path()
        base = base if base.is_absolute() else self.cwd / base
        try:
            entries = sorted(base.iterdir(), key=lambda p: p.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or name in _SKIP_DIRS or (
                    name.startswith(".") and not prefix.startswith(".")):
                continue
            suffix = "/" if entry.is_dir() else ""
            text = f"{folder}/{name}{suffix}" if folder else f"{name}{suffix}"
            yield Completion(f"@{text}", start_position=-(len(typed) + 1),
                             display=safe_line(name + suffix))
            shown += 1
            if shown >= 50:
                return
