"""The everyday slash commands beyond the basics: /review and /security-review (prompts
the model runs), /diff, /export, /add-dir, /usage, /skills, /doctor, /effort,
/rename, /copy and /statusline. `commands`
merges `COMMANDS` into its table; it is imported before the first frame, so rich and
the rest load inside the commands.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.git_config_guard import DIFF_FLAGS
from wisp.jsontypes import JSON
from wisp.textsafe import safe, safe_line

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

Handler = Callable[["TuiApp", str], Awaitable[None]]
DIFF_LINES = 200
GIT_TIMEOUT_S = 10
REVIEW = (
    "Review the changes in this repository that are not committed yet (run `git status` "
    "and `git diff HEAD`{scope}). For each problem you find, name the file and line, say "
    "what is wrong and how to fix it: bugs first, then risky or unclear code, then missing "
    "tests. Do not change any file. End with a one-line verdict.")
SECURITY_REVIEW = (
    "Do a security review of the changes in this repository that are not committed yet "
    "(run `git status` and `git diff HEAD`{scope}). Look for injection, unsafe handling of "
    "paths, secrets in code or logs, missing authentication or authorisation checks, unsafe "
    "deserialisation and risky dependencies. For each finding give the file and line, the "
    "severity, how it could be exploited and the fix. Do not change any file.")


async def cmd_review(app: TuiApp, args: str) -> None:
    app.send(REVIEW.format(scope=f", limited to: {args}" if args else ""))


async def cmd_security_review(app: TuiApp, args: str) -> None:
    app.send(SECURITY_REVIEW.format(scope=f", limited to: {args}" if args else ""))


async def _git(cwd: Path, *args: str) -> tuple[int, str]:
    """git in its own process group, ended if it outlives the timeout."""
    from wisp.git_config_guard import guarded_argv
    from wisp.processes import kill_group

    argv = await guarded_argv("git", cwd, *args)  # the repository's own commands stay off
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), GIT_TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError):
        kill_group(proc.pid)
        raise
    return proc.returncode or 0, out.decode("utf-8", "replace")


async def cmd_diff(app: TuiApp, args: str) -> None:
    """The uncommitted changes: `git diff --stat HEAD`, then the diff itself, coloured."""
    from rich.text import Text

    if shutil.which("git") is None:
        app.view.print_text("git is not installed.", "yellow")
        return
    code, stat = await _git(app.config.cwd, "diff", "--stat", *DIFF_FLAGS, "HEAD")
    if code != 0:
        app.view.print_text(f"No diff: {stat.strip() or 'not a git repository'}", "yellow")
        return
    if not stat.strip():
        app.view.print_text("No uncommitted changes.")
        return
    _, diff = await _git(app.config.cwd, "diff", *DIFF_FLAGS, "HEAD")
    out = Text(safe(stat.rstrip("\n")) + "\n\n")
    lines = diff.split("\n")
    for line in lines[:DIFF_LINES]:
        style = ("green" if line.startswith("+") else "red" if line.startswith("-") else
                 "cyan" if line.startswith("@@") else "bold" if line.startswith("diff ")
                 else "dim")
        out.append(safe(line) + "\n", style=style)
    if len(lines) > DIFF_LINES:
        out.append(f"… +{len(lines) - DIFF_LINES} more lines\n", style="dim")
    out.rstrip()
    app.view.print_text(out)


async def cmd_export(app: TuiApp, args: str) -> None:
    """The conversation as plain text, to `args` or a file named after the session."""
    session = app.runtime.session
    name = args or f"conversation-{session.session_id[:8]}.txt"
    path = Path(name).expanduser()
    path = path if path.is_absolute() else app.config.cwd / path
    try:
        path.write_text(conversation_text(app.runtime.conversation), encoding="utf-8")
    except OSError as exc:
        app.view.print_text(f"Could not export: {exc}", "red")
        return
    app.view.print_text(f"Conversation exported to {path}")


def conversation_text(history: Sequence[JSON]) -> str:
    parts: list[str] = []
    for message in history:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
        who = "> " if message.get("role") == "user" else ""
        for block in blocks:
            if not isinstance(block, dict):
                continue
            parts.extend(_block_text(block, who))
    return "\n\n".join(parts) + "\n"


def _block_text(block: JSON, who: str) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [who + str(block.get("text", "")).replace("\n", "\n" + who)]
    if kind == "tool_use":
        return [f"● {block.get('name')}({json.dumps(block.get('input'), ensure_ascii=False)})"]
    if kind == "tool_result":
        from wisp.tui.render import result_text

        text = result_text(block.get("content"))
        return ["  ⎿ " + text[:2000].replace("\n", "\n    ")]
    return []


async def cmd_add_dir(app: TuiApp, args: str) -> None:
    """Another folder the tools may read and write without asking (as --add-dir)."""
    if not args:
        app.view.print_text("Usage: /add-dir <folder>", "yellow")
        return
    folder = Path(args).expanduser()
    folder = (folder if folder.is_absolute() else app.config.cwd / folder).resolve()
    if not folder.is_dir():
        app.view.print_text(f"Not a folder: {folder}", "red")
        return
    await app.runtime.add_working_dir(folder)  # MCP servers are told of the new root
    app.view.print_text(f"Added {folder} as a working folder for this session.")


async def cmd_usage(app: TuiApp, args: str) -> None:
    from wisp.tui.commands import cmd_cost
    from wisp.tui.layout import context_percent

    await cmd_cost(app, args)
    app.view.print_text(f"Context:     {context_percent(app)} of the window used")


async def cmd_skills(app: TuiApp, args: str) -> None:
    skills = app.commands.skills
    if not skills:
        app.view.print_text("No skills are installed (.claude/skills/<name>/SKILL.md).")
        return
    lines = [f"/{name}  {description}" for name, description in sorted(skills.items())]
    app.view.print_text(safe("\n".join(lines)))


async def cmd_doctor(app: TuiApp, args: str) -> None:
    """What a failing setup usually lacks, one line each."""
    from wisp import __version__

    env = app.runtime.env
    key = "set" if env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") else (
        "missing: set ANTHROPIC_API_KEY")
    checks = [
        ("wisp", f"{__version__} (python {sys.version.split()[0]})"),
        ("API key", key),
        ("API", env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"),
        ("git", shutil.which("git") or "not found (/diff and reviews need it)"),
        ("ripgrep", shutil.which("rg") or "not found (Grep uses its own search)"),
        ("$EDITOR", os.environ.get("VISUAL") or os.environ.get("EDITOR")
         or "not set (ctrl+g and /memory use it)"),
        ("settings", ", ".join(s["source"] for s in app.runtime.settings.describe())
         or "none"),
    ]
    app.view.print_text("\n".join(safe_line(f"{name:<9} {value}") for name, value in checks))


async def cmd_effort(app: TuiApp, args: str) -> None:
    """/effort shows the level; /effort <level> sets it for the next requests."""
    from wisp.models.shape import EFFORTS

    level = args.strip().lower()
    if not level:
        app.view.print_text(f"Effort: {app.runtime.effort} (one of {', '.join(EFFORTS)})")
        return
    if level not in EFFORTS:
        app.view.print_text(f"Unknown effort {safe_line(level)!r}: use one of "
                            f"{', '.join(EFFORTS)}", "yellow")
        return
    app.runtime.set_effort(level)
    app.view.print_text(f"Effort set to {level} for the next requests")


async def cmd_rename(app: TuiApp, args: str) -> None:
    title = " ".join(args.split())
    if not title:
        app.view.print_text("Usage: /rename <title>", "yellow")
    elif app.runtime.rename(title):
        app.view.print_text(f"Session renamed to {safe_line(title)}")
    else:
        app.view.print_text("This session is not saved (--no-session-persistence): "
                            "nothing to rename", "yellow")


def last_answer(history: Sequence[JSON]) -> str:
    """The text of the model's latest message that has any."""
    from wisp.engine.decide import final_text

    for message in reversed(history):
        if message.get("role") == "assistant" and (text := final_text(message)).strip():
            return text
    return ""


async def cmd_copy(app: TuiApp, args: str) -> None:
    text = last_answer(app.runtime.conversation)
    if not text:
        app.view.print_text("Nothing to copy yet: the model has not answered.", "yellow")
        return
    app.copy_to_clipboard(text)
    app.view.print_text(f"Copied the last answer ({len(text):,} characters) to the clipboard "
                        "(through the terminal: OSC 52)")


async def cmd_statusline(app: TuiApp, args: str) -> None:
    """/statusline: the status line command and what it shows. /statusline <command>: use
    it (saved as `statusLine` in the user's settings); /statusline off: wisp's own."""
    from wisp.tui.status_line import configured_command

    command = args.strip()
    if not command:
        current = configured_command(app)
        app.view.print_text(
            f"Status line: {safe_line(current)}\nShows: {app.status_text or '(nothing yet)'}"
            if current else "No status line command: wisp's own footer is shown. Set one "
            "with /statusline <command> (it gets the session as JSON on stdin).")
        return
    from wisp.paths import config_dir
    from wisp.tui.settings_edit import set_setting, unset_setting

    path = config_dir(app.env) / "settings.json"
    try:
        if command == "off":
            unset_setting(path, "statusLine")
        else:
            set_setting(path, "statusLine", {"type": "command", "command": command})
    except ValueError as exc:
        app.view.print_text(str(exc), "red")
        return
    app.status_command = "" if command == "off" else command
    app.view.print_text("Status line off" if command == "off"
                        else f"Status line set to {safe_line(command)}")
    app.refresh_status_line()


async def cmd_plugin(app: TuiApp, args: str) -> None:
    """The plugins this session loaded (--plugin-dir, settings): what each brings."""
    plugins = app.runtime.project.plugins
    if not plugins:
        app.view.print_text("No plugins are loaded (add one with --plugin-dir <folder>).")
        return
    from wisp.tui.commands import add_row, new_table, short_path, show_table

    table = new_table("plugin", "version", "brings", "folder")
    for plugin in plugins:
        brings = [f"{len(found)} {kind}" for kind, folders in (
            ("command folder", plugin.commands_dirs), ("agent folder", plugin.agents_dirs),
            ("skill folder", plugin.skills_dirs)) if (found := [f for f in folders
                                                               if f.is_dir()])]
        brings += ["hooks"] if plugin.hooks else []
        brings += [f"MCP: {', '.join(plugin.mcp_servers)}"] if plugin.mcp_servers else []
        add_row(table, plugin.name, plugin.version or "-", ", ".join(brings) or "nothing",
             short_path(plugin.path, app.config.cwd))
    show_table(app, table)
    for plugin in plugins:
        if plugin.description:
            app.view.print_text(f"  {plugin.name}: {plugin.description}", "dim")


COMMANDS: dict[str, tuple[str, Handler]] = {
    "review": ("ask the model to review the uncommitted changes [scope]", cmd_review),
    "security-review": ("ask the model for a security review of the uncommitted changes",
                        cmd_security_review),
    "diff": ("the uncommitted changes (git diff HEAD)", cmd_diff),
    "export": ("write the conversation to a text file [path]", cmd_export),
    "add-dir": ("let the tools work in another folder too <folder>", cmd_add_dir),
    "usage": ("tokens, cost and context used by this session", cmd_usage),
    "skills": ("the skills this session can use", cmd_skills),
    "doctor": ("check the setup: key, API, git, ripgrep, editor, settings", cmd_doctor),
    "effort": ("how hard the model works: low, medium, high, xhigh, max [level]", cmd_effort),
    "rename": ("name this session (shown by /resume and --resume) <title>", cmd_rename),
    "copy": ("put the model's last answer on the clipboard", cmd_copy),
    "statusline": ("the footer's status line command [command | off]", cmd_statusline),
    "plugin": ("the loaded plugins and what each brings", cmd_plugin),
}
