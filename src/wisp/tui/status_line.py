"""The status line: a command from settings (`statusLine: {"type": "command", "command":
…}`, as Claude Code's) whose first line of output the footer shows in place of wisp's
own model, context and cost.

It runs when the UI is ready and after each turn, with the session's facts as JSON on
stdin (session id, transcript, folder, model, cost, version), in its own process group,
killed after `TIMEOUT_S`. Its output is shown as text: every control character is made
visible, so it cannot move the cursor or retitle the terminal. A command that fails or
prints nothing leaves wisp's own footer in place.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.textsafe import safe_line

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

TIMEOUT_S = 5.0
MAX_CHARS = 200


def configured_command(app: TuiApp) -> str | None:
    """/statusline's choice in this session, else the settings'."""
    if app.status_command is not None:
        return app.status_command or None
    value = app.runtime.settings.scalar("statusLine")
    if isinstance(value, dict) and value.get("type", "command") == "command":
        command = value.get("command")
        return command if isinstance(command, str) and command.strip() else None
    return None


def facts(app: TuiApp) -> JSON:
    from wisp import __version__

    session = app.runtime.session
    return {"hook_event_name": "Status", "session_id": session.session_id,
            "transcript_path": session.transcript_path, "cwd": str(app.config.cwd),
            "model": {"id": session.model, "display_name": session.model},
            "workspace": {"current_dir": str(app.config.cwd),
                          "project_dir": str(app.config.cwd)},
            "version": __version__, "permission_mode": session.permission_mode,
            "cost": {"total_cost_usd": session.usage.cost_usd}}


async def run_status_command(command: str, stdin: JSON, cwd: str, env: dict[str, str]
                             ) -> str:
    """The command's first line of output, made safe; "" when it fails or times out."""
    from wisp.processes import kill_group

    try:
        proc = await asyncio.create_subprocess_shell(
            command, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True)
    except OSError:
        return ""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(stdin).encode()),
                                        TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError):
        kill_group(proc.pid)
        await proc.wait()
        return ""
    if proc.returncode != 0:
        return ""
    first = out.decode("utf-8", "replace").strip().split("\n", 1)[0]
    return safe_line(first)[:MAX_CHARS]


async def refresh(app: TuiApp) -> None:
    """Runs the configured command and shows its line (or clears it)."""
    command = configured_command(app)
    text = ""
    if command is not None:
        env = {**app.env, **app.runtime.env}
        text = await run_status_command(command, facts(app), str(app.config.cwd), env)
    if text != app.status_text:
        app.status_text = text
        app.invalidate()
