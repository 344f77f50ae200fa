"""The questions the terminal UI asks before anything of a project runs: whether the user
trusts the folder, then whether its CLAUDE.md files may bring in files from outside it.

Above: `wisp.cli.interactive`, which calls `settle` before it loads settings, so no hook,
MCP server or settings `env` of the folder exists yet while the user decides. Below: the
records in the user's config (`wisp.settings.trust`), which Claude Code reads too.

Both are asked as Claude Code asks them, in the same words, the safe answer first and
pre-selected. Trust is asked on the first run in a folder (not only when its settings
grant something: the folder's files, a `.git/config` among them, shape what even a
read-only command does); "No, exit" leaves with status 1, Esc with 0, as the reference
does. A Yes in the home folder lasts for the session only, so trusting `~` never
trusts everything under it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.settings import trust

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings
    from rich.console import RenderableType

    from wisp.tui.dialog import Picker

ALL_SOURCES = ("user", "project", "local")
NOT_TRUSTED = ("wisp didn't start because this folder isn't trusted.\n"
               "Run wisp again and choose Yes, or run it in another folder.\n")
SAFETY_CHECK = ("Quick safety check: Is this a project you created or one you trust? (Like "
                "your own code, a well-known open source project, or work from your team). "
                "If not, take a moment to review what's in this folder first.")
TRUST_CHOICES = ["No, exit", "Yes, I trust this folder"]
IMPORT_CHOICES = ["No, disable external imports", "Yes, allow external imports"]

__all__ = ["IMPORT_CHOICES", "NOT_TRUSTED", "TRUST_CHOICES", "settle"]


def settle(cwd: Path, env: dict[str, str], sources: Sequence[str] | None) -> int | None:
    """Asks what must be asked; None to go on, else the exit status to leave with. A Yes
    that cannot be recorded (or is not, in the home folder) holds for this session:
    `env` then carries `WISP_TRUST_PROJECT`, which the session's tools never see."""
    chosen = ALL_SOURCES if sources is None else tuple(sources)
    if not trust.is_trusted(cwd, env):
        answer = asyncio.run(_ask(lambda: _trust_picker(cwd, env, chosen), env))
        if answer != 1:
            sys.stdout.write(NOT_TRUSTED)
            return 1 if answer == 0 else 0
        env[trust.TRUST_ENV] = "1"
        if not _is_home(cwd, env):
            _record(cwd, env, **{trust.ACCEPTED: True})
    outside = _outside_imports(cwd, env, chosen)
    if outside:
        answer = asyncio.run(_ask(lambda: _imports_picker(outside), env))
        _record(cwd, env, **{trust.IMPORTS_ASKED: True, trust.IMPORTS_APPROVED: answer == 1})
    return None


def _is_home(cwd: Path, env: dict[str, str]) -> bool:
    root = trust.project_root(cwd)
    return root in (Path(trust.home_folder(env)).absolute(), Path(root.anchor))


def _record(cwd: Path, env: dict[str, str], **flags: bool) -> None:
    try:
        trust.record(cwd, env, **flags)
    except (OSError, ValueError) as exc:
        from wisp.diagnostics import warn
        from wisp.textsafe import safe_line

        warn(f"wisp: warning: could not record the answer ({safe_line(str(exc))}); it "
             "holds for this session only\n")


def _outside_imports(cwd: Path, env: dict[str, str], sources: Sequence[str]) -> list[Path]:
    """Files outside the project the project's memory would bring in, when the user has
    never been asked about them here."""
    if "project" not in sources and "local" not in sources:
        return []
    from wisp.paths import config_dir
    from wisp.project.memory import read_memory

    home = Path(env["HOME"]) if env.get("HOME") else None
    outside = read_memory(cwd, config_dir(env), sources, home).outside
    if not outside or any(trust.imports_decision(cwd, env)):
        return []
    return outside


# The two dialogs ------------------------------------------------------------------------


def _trust_picker(cwd: Path, env: dict[str, str], sources: Sequence[str]) -> Picker:
    from rich.text import Text

    from wisp.settings.loader import load_settings
    from wisp.tui.dialog import Picker

    held = load_settings(cwd, env, selected=tuple(sources), flag=None).held_back
    body = Text()
    body.append("Accessing workspace:\n\n", style="bold")
    body.append(f"{trust.project_root(cwd)}\n\n", style="bold")
    body.append(f"{SAFETY_CHECK}\n\nwisp'll be able to read, edit, and execute files here.")
    if _is_home(cwd, env):
        body.append(" This is your home folder, so Yes lasts for this session only.")
    for path, grants in held:
        body.append(f"\n\n⚠ {_relative(path, cwd)} asks for: {', '.join(grants)}.\n",
                    style="yellow")
        body.append("Trusting this folder applies it (hooks and MCP servers run commands).",
                    style="yellow")
    return Picker(_framed(body), TRUST_CHOICES, footer="Enter to confirm · Esc to cancel",
                  refusal=0)


def _imports_picker(outside: list[Path]) -> Picker:
    from rich.text import Text

    from wisp.tui.dialog import Picker

    body = Text()
    body.append("Allow external CLAUDE.md file imports?\n\n", style="bold")
    body.append("This project's CLAUDE.md files import files outside the project.\n"
                "Never allow this for third-party repositories.\n\nExternal imports:\n")
    for path in outside:
        body.append(f"  {path}\n")
    body.rstrip()
    return Picker(_framed(body), IMPORT_CHOICES, footer="Enter to confirm · Esc to disable",
                  refusal=0)


def _framed(body: RenderableType) -> RenderableType:
    from rich.console import Group
    from rich.rule import Rule

    return Group(Rule(style="dim"), body, "")


def _relative(path: str, cwd: Path) -> str:
    prefix = str(cwd).rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


async def _ask(make: Callable[[], Picker], env: dict[str, str]) -> int | None:
    """Shows the picker `make` builds (in the loop its answer needs) inline until it is
    answered (None: Esc or ctrl+c)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.layout import Layout, Window

    from wisp.tui.layout import safe_ansi, shown
    from wisp.tui.render import Renderer
    from wisp.tui.terminal import make_output

    picker = make()
    output = make_output(env)

    def draw() -> ANSI:
        size = output.get_size()
        return safe_ansi(picker.render(Renderer(size.columns, env), size.rows - 1))

    app: Application[None] = Application(
        layout=Layout(Window(shown(draw), dont_extend_height=True)),
        key_bindings=_keys(picker), full_screen=False, output=output, mouse_support=False,
        erase_when_done=True)
    app.ttimeoutlen = 0.05  # Esc alone is Esc at once
    picker.future.add_done_callback(lambda _: app.exit())
    await app.run_async()
    return picker.future.result() if picker.future.done() else None


def _keys(picker: Picker) -> KeyBindings:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    kb = KeyBindings()
    for digit in "123456789"[:len(picker.choices)]:
        @kb.add(digit)
        def _pick(event: KeyPressEvent) -> None:
            picker.pick(int(event.key_sequence[0].key) - 1)

    @kb.add("up")
    def _up(event: KeyPressEvent) -> None:
        picker.move(-1)

    @kb.add("down")
    @kb.add("tab")
    def _down(event: KeyPressEvent) -> None:
        picker.move(1)

    @kb.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        picker.pick(picker.selected)

    @kb.add("escape", eager=True)
    @kb.add("c-c")
    @kb.add("c-d")
    def _cancel(event: KeyPressEvent) -> None:
        picker.pick(None)

    return kb
