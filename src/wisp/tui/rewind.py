"""Rewind (Esc Esc on an empty input, or /rewind): back to before an earlier prompt, for
the conversation, the code, or both.

Each prompt the UI sends is remembered with its message id (which names its file
checkpoint, `wisp.sessions.checkpoints`), how long the history was before it, and the
transcript message it followed. Restoring the code asks the runtime to rewind the files
to that checkpoint; restoring the conversation cuts the history back and makes the next
message follow the one before the prompt, so the transcript branches there (a resume
follows the newest branch). The prompt comes back into the input, to be edited and sent
again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from wisp.jsontypes import JSON
from wisp.textsafe import safe_line
from wisp.tui.dialog import Picker

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

SHOWN = 20  # prompts offered, newest first
ACTIONS = ("Restore code and conversation", "Restore conversation", "Restore code",
           "Never mind")


@dataclass(frozen=True)
class PromptMark:
    uuid: str  # the prompt's message id: its file checkpoint
    text: str
    history_len: int  # messages before it
    parent: str | None  # the transcript message it followed


def mark(app: TuiApp, uuid: str, text: str) -> None:
    runtime = app.runtime
    app.prompts.append(PromptMark(uuid, text, len(runtime.conversation),
                                  runtime.session.last_message_uuid))


async def rewind(app: TuiApp) -> None:
    session_id = app.runtime.session.session_id
    marks = [m for m in app.prompts if m.history_len <= len(app.runtime.conversation)]
    if not marks:
        app.view.print_text("Nothing to rewind to yet.", "yellow")
        return
    newest = list(reversed(marks))[:SHOWN]
    choice = await app.show_dialog(prompt_picker(newest))
    if choice is None or app.runtime.session.session_id != session_id:
        return
    target = newest[choice]
    preview = app.runtime.rewind_files(target.uuid, dry_run=True)
    action = await app.show_dialog(action_picker(target, preview))
    if action is None or action == len(ACTIONS) - 1:
        return
    restored = []
    if action in (0, 2):
        restored.append(_restore_code(app, target))
    if action in (0, 1):
        _restore_conversation(app, target)
        restored.append("conversation")
    app.view.print_text(f"⎿ Rewound {' and '.join(restored)} to before: "
                        f"{_one_line(target.text)}", "yellow")


def _one_line(text: str) -> str:
    line = safe_line(text.strip().split("\n", 1)[0])
    return line if len(line) <= 70 else line[:69] + "…"


def prompt_picker(newest: list[PromptMark]) -> Picker:
    return Picker(Text("Rewind: back to before which prompt?", style="bold"),
                  [_one_line(m.text) for m in newest])


def action_picker(target: PromptMark, preview: JSON) -> Picker:
    """What to restore; `preview` is the checkpoint's dry run (what files would change)."""
    return Picker(_action_title(target, preview), list(ACTIONS), refusal=len(ACTIONS) - 1)


def _action_title(target: PromptMark, preview: JSON) -> Group:
    if preview.get("canRewind"):
        files = preview.get("filesChanged") or []
        code = (f"Code: {len(files)} file{'s' if len(files) != 1 else ''} would change "
                f"(+{preview.get('insertions', 0)} −{preview.get('deletions', 0)})"
                if files else "Code: no file changed since then")
    else:
        code = f"Code: {preview.get('error', 'no checkpoint')}"
    return Group(Text(f"Rewind to before: {_one_line(target.text)}", style="bold"),
                 Text(safe_line(code), style="dim"))


def _restore_code(app: TuiApp, target: PromptMark) -> str:
    answer = app.runtime.rewind_files(target.uuid)
    if not answer.get("canRewind"):
        app.view.print_text(f"Code not restored: {answer.get('error')}", "red")
        return "nothing of the code"
    return "code"


def _restore_conversation(app: TuiApp, target: PromptMark) -> None:
    app.runtime.rewind_conversation(target.history_len, target.parent)
    app.prompts[:] = [m for m in app.prompts if m.history_len < target.history_len]
    app.input.text = target.text
    app.input.cursor_position = len(target.text)
