"""`TuiApp`: one terminal session of wisp. It owns a `Runtime` (the same sessions,
settings, hooks, permission rules and MCP servers as print mode and the SDK), a
prompt_toolkit `Application` drawn inline, and the queue of prompts typed while the model
works.

Pieces: `view` (engine events → scrollback and live state), `layout` (the live region),
`keys` (key bindings), `permission` (the approval dialog), `commands` (slash commands),
`shell` (`!cmd`), `prompt_input` (completion, pastes, `@file` attachments, history).
`TuiApp` itself is split by concern: `screen` (printing, redraws, the header), `turns`
(prompts, the queue, turns and interrupts), and here building, running and ending it.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory

from wisp import paths
from wisp.permissions.modes import PermissionMode
from wisp.runtime.config import RuntimeConfig
from wisp.tui.prompt_input import InputCompleter, Pastes, history_path
from wisp.tui.terminal import make_output
from wisp.tui.turns import Turns

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime
    from wisp.tui.dialog import Picker
    from wisp.tui.permission import PermissionPrompt
    from wisp.tui.rewind import PromptMark

MODE_CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan")
SPINNER = "✻✳✢·✢✳"


def _import_the_rest() -> None:
    """What the first frame does not need: the engine, rich and the code highlighter.
    Imported in a thread while the input line is already up (see `TuiApp.run`)."""
    import importlib

    importlib.import_module("pygments.lexers.python")
    import rich.markdown
    import rich.syntax  # noqa: F401

    import wisp.runtime.runtime
    import wisp.tui.permission
    import wisp.tui.view  # noqa: F401


class TuiApp(Turns):
    """Building, running and ending the session's UI; prompts and turns are `Turns`',
    drawing is `Screen`'s (what `Turns` builds on)."""

    # Set by `_load`, once the engine is imported; nothing runs a turn before that.
    permission: PermissionPrompt

    def __init__(self, config: RuntimeConfig, env: Mapping[str, str],
                 shown_model: str = "") -> None:
        from wisp.tui.commands import CommandSet

        # File checkpoints on (as the SDKs turn them on): what rewind restores the code
        # from. The variable name is written out: its module is not needed this early.
        self.config = config._replace(
            include_partial_messages=True,
            env={"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1", **config.env})
        self.env = dict(env)
        self.shown_model = shown_model or config.model or ""
        self.output = make_output(self.env)
        self.loaded = asyncio.Event()
        self.commands = CommandSet(self)
        self.pastes = Pastes()
        self.queue: list[str] = []
        self.prompts: list[PromptMark] = []  # what rewind can go back to
        self.dialog: Picker | None = None
        self.busy_since: float | None = None
        self.pending_context: list[str] = []  # `!cmd` output for the next prompt
        self.last_ctrl_c = 0.0
        self.last_esc = 0.0
        self.early_mode_steps = 0  # Shift+Tab pressed before the engine had loaded
        self.hint = ""  # a one-off line above the footer ("press ctrl+c again to exit")
        self.status_text = ""  # the settings' status line command's output (status_line)
        self.status_command: str | None = None  # set by /statusline for this session
        self._status_refresh: asyncio.Future[None] | None = None
        self.exit_code = 0
        self.completer = InputCompleter(config.cwd, self.commands.descriptions())
        self.input = Buffer(
            multiline=True, completer=self.completer, complete_while_typing=True,
            history=FileHistory(str(self._history_file())), enable_history_search=False)
        self.show_shortcuts = False  # `?`: the overlay under the input, until a key is typed
        self.input.on_text_changed += lambda _: setattr(self, "show_shortcuts", False)
        self.app = self._build_application()
        self._turn: asyncio.Task[None] | None = None
        self._spinner: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._shell: asyncio.Future[None] | None = None  # a running `!cmd`
        self._watcher: asyncio.Task[None] | None = None  # turns woken by background tasks
        self._frame_pending = False
        self._last_frame = 0.0
        self.tail_due = True  # the streaming tail changed since it was last rendered

    # Building ---------------------------------------------------------------------------

    async def _load(self) -> None:
        """The engine, the view and the session, made after the first frame is up."""
        # The thread holds the GIL while it imports; a short switch interval hands it
        # back to the input loop quickly, so typing stays live meanwhile.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0005)
        try:
            await asyncio.to_thread(_import_the_rest)
        finally:
            sys.setswitchinterval(interval)
        from wisp.tui.permission import PermissionPrompt
        from wisp.tui.view import ConversationView

        self.view = ConversationView(self, self.env, output_dir=str(
            paths.config_dir(self.env) / "tool-output"), cwd=self.config.cwd)
        self.permission = PermissionPrompt(self)
        # Warnings of the session's start (memory left out, a broken plugin) go into the
        # scrollback, not under the live region where stderr would tear it.
        from wisp.diagnostics import route_to

        route_to(lambda text: self.view.print_text(text.rstrip("\n"), "yellow"))
        try:
            self.runtime = self._open_runtime(self.config)
        except Exception as exc:  # a bad session configuration: say so, and leave
            self.print(f"Error: {exc}\n")
            self.exit(1)
            return
        for _ in range(self.early_mode_steps):  # the presses typed while it loaded count
            self._next_mode()
        self.early_mode_steps = 0
        self.commands.reload()  # now with the plugins' commands and the skills
        self.completer.commands = self.commands.descriptions()
        # What loading built lives as long as the UI: out of the collector's sight, so a
        # full collection mid-answer does not walk it all (a pause of tens of ms).
        gc.freeze()
        self.loaded.set()
        self._watch_tasks()
        self.refresh_status_line()
        if self.config.resumed:
            from wisp.tui.replay import replay_history

            replay_history(self, self.runtime.conversation)
        self.invalidate()

    def _watch_tasks(self) -> None:
        from wisp.tui import tasks_panel

        tasks_panel.cancel(self._watcher)
        self._watcher = asyncio.ensure_future(tasks_panel.watch(self))

    def _open_runtime(self, config: RuntimeConfig) -> Runtime:
        from wisp.runtime.runtime import Runtime

        runtime = Runtime.open(config, self.view)
        self.permission.connect(runtime)
        return runtime

    def _history_file(self) -> Any:
        path = history_path(paths.config_dir(self.env), paths.project_key(self.config.cwd))
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _build_application(self) -> Application[int]:
        from wisp.tui.keys import key_bindings
        from wisp.tui.layout import STYLE, build_layout

        return Application(
            layout=build_layout(self), key_bindings=key_bindings(self), style=STYLE,
            full_screen=False, output=self.output, mouse_support=False,
            # No redraw throttle here (a key must be drawn at once; `invalidate` below
            # throttles the engine's output instead), and no size polling (SIGWINCH tells
            # us), so an idle UI wakes for nothing.
            terminal_size_polling_interval=None, max_render_postpone_time=0,
            erase_when_done=True,  # the input and footer go; the conversation stays
            include_default_pygments_style=False)

    # Running ---------------------------------------------------------------------------

    async def run(self, first_prompt: str | None) -> int:
        """The input line comes up first; the engine loads behind it (a prompt typed in
        the meantime waits for it), so typing can start as early as possible."""
        self.app.ttimeoutlen = 0.05  # Esc alone is Esc after 50 ms, not after 500
        # Esc is also the first key of Alt+key bindings (Alt+Enter, and prompt_toolkit's
        # Alt+/ ...), so the key processor holds it to see what follows: for a whole second
        # by default, during which a typed "/" became Alt+/ and was swallowed. A terminal
        # sends Alt+key as both bytes at once; a person's next key comes later than this.
        self.app.timeoutlen = 0.05
        self._welcome()
        self.app.pre_run_callables.append(lambda: self.background(self._load()))
        if first_prompt:
            self.app.pre_run_callables.append(lambda: self.submit(first_prompt))
        try:
            await self.app.run_async()
        finally:
            await self.shutdown()
        self._how_to_resume()
        return self.exit_code

    def _how_to_resume(self) -> None:
        """On the way out, the command that comes back to this conversation (none when
        nothing was said, or nothing was saved)."""
        if not self.loaded.is_set():
            return
        session = self.runtime.session
        if session.recorder is None or not self.runtime.conversation:
            return
        from wisp.textsafe import safe

        self.print(f"\nResume this session with:\n  wisp --resume {safe(session.session_id)}\n")

    async def shutdown(self) -> None:
        if not self.loaded.is_set():
            return
        if self._watcher is not None:
            self._watcher.cancel()
        if self._turn is not None and not self._turn.done():
            self.runtime.interrupt()
            await asyncio.wait({self._turn}, timeout=5)
        await self.runtime.aclose()
        from wisp.tools.reaper import end_all_processes

        end_all_processes()

    def exit(self, code: int = 0) -> None:
        self.exit_code = code
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=code)

    # Dialogs and modes -------------------------------------------------------------------

    async def show_dialog(self, picker: Picker) -> int | None:
        self.dialog = picker
        self.invalidate()
        try:
            return await picker.future
        finally:
            self.dialog = None
            self.app.layout.focus(self.input)
            self.invalidate()

    def open_rewind(self) -> None:
        """Esc Esc on an empty input: /rewind."""
        if self.loaded.is_set() and not self.busy:
            self.background(self.commands.run("/rewind"))

    def cycle_mode(self) -> None:
        """Shift+Tab. Pressed before the engine is up (the input line comes first), the
        press is kept and applied as the session opens: it must not be lost."""
        if not hasattr(self, "runtime"):
            self.early_mode_steps += 1
            self.invalidate()
            return
        self._next_mode()
        self.invalidate()

    def _next_mode(self) -> None:
        mode = self.runtime.session.permission_mode
        nxt = MODE_CYCLE[(MODE_CYCLE.index(mode) + 1) % len(MODE_CYCLE)] if (
            mode in MODE_CYCLE) else "default"
        self.runtime.set_permission_mode(nxt)

    # Conversations -----------------------------------------------------------------------

    async def new_conversation(self, resume: str | None = None) -> None:
        """/clear (a fresh session) and /resume (another of this project's sessions):
        the current runtime ends (SessionEnd hooks, MCP servers, processes) and a new one
        starts with the same settings, model and mode."""
        if self.busy:
            self.interrupt()
            assert self._turn is not None
            await asyncio.wait({self._turn})
        model, mode = self.runtime.session.model, self.runtime.session.permission_mode
        await self.runtime.aclose()
        config = self.config._replace(
            resume=resume, continue_session=False, session_id=None,
            start=None, fork_session=False, resume_session_at=None, resume_drops_turn=None,
            model=model, permission_mode=mode, loaded_settings=self.runtime.settings)
        self.config = config
        self.runtime = self._open_runtime(config)
        self._watch_tasks()
        self.queue.clear()
        self.prompts.clear()
        self.pending_context.clear()
        self.invalidate()
