"""/resume: pick another session of this project and carry it on here.

`/resume` opens a search picker (type to narrow by title, first prompt or any words of
the prompts; a preview shows the highlighted session's last messages). `/resume <words>`
resumes at once the one session whose id starts with them or whose title or first prompt
holds them; several matches open the picker on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp
    from wisp.tui.sessions_list import SessionRow

PREVIEW_MESSAGES = 6
LINES_PER_MESSAGE = 3


async def resume(app: TuiApp, args: str) -> None:
    from wisp.tui.sessions_list import SessionRow, matching, project_sessions, search

    sessions = project_sessions(app.env, app.config.cwd, exclude=app.runtime.session.session_id)
    if args:
        sessions = matching(sessions, args)
    if not sessions:
        app.view.print_text(f"No session matches {args}." if args
                            else "No other sessions in this project.",
                            "yellow" if args else "")
        return
    wanted: SessionRow | None = sessions[0]
    if len(sessions) > 1 or not args:
        from wisp.tui.search_picker import SearchPicker

        heading = f"Resume a session matching {args!r}" if args else "Resume a session"
        picker = SearchPicker(heading, sessions, label=SessionRow.label, search=search,
                              preview=preview_lines, verb="resume")
        wanted = picker.picked(await app.show_dialog(picker))
    if wanted is None:
        return
    await app.new_conversation(resume=wanted.session_id)
    from wisp.tui.replay import replay_history

    replay_history(app, app.runtime.conversation)


def preview_lines(row: SessionRow, width: int) -> list[str]:
    """The session's last messages: a prompt after "❯", an answer after "⏺", each cut
    to a few lines (later lines indented)."""
    from wisp.tui.sessions_list import preview

    lines: list[str] = []
    for who, text in preview(row.path, PREVIEW_MESSAGES):
        mark = "❯ " if who == "user" else "⏺ "
        said = [line for line in text.split("\n") if line.strip()][:LINES_PER_MESSAGE]
        lines += [(mark if i == 0 else "  ") + line for i, line in enumerate(said)]
    return lines or ["(no messages)"]
