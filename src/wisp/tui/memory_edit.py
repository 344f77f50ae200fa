"""`/memory edit [project | local | user]`: a memory file opened in $VISUAL/$EDITOR."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp import paths

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

MEMORY_FILES = {"project": "CLAUDE.md", "local": "CLAUDE.local.md"}


async def edit_memory(app: TuiApp, which: str) -> None:
    """The terminal is handed to the editor, then the UI comes back; the file is read
    again by the next session (or /clear)."""
    import os
    import shlex
    import subprocess

    from prompt_toolkit.application import run_in_terminal

    from wisp.tui.commands import short_path

    if which not in (*MEMORY_FILES, "user"):
        app.view.print_text("Usage: /memory edit [project | local | user]", "yellow")
        return
    editor = app.env.get("VISUAL") or app.env.get("EDITOR") or os.environ.get(
        "VISUAL") or os.environ.get("EDITOR")
    if not editor:
        app.view.print_text("Set $VISUAL or $EDITOR to edit memory files here.", "yellow")
        return
    path = (paths.config_dir(app.env) / "CLAUDE.md" if which == "user"
            else app.config.cwd / MEMORY_FILES[which])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(exist_ok=True)
    code = await run_in_terminal(lambda: subprocess.call([*shlex.split(editor), str(path)]))
    app.view.print_text(f"Edited {short_path(path, app.config.cwd)}: it applies from the "
                        "next session (or /clear)" if code == 0
                        else f"The editor exited with {code}", "" if code == 0 else "yellow")
