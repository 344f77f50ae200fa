"""`TuiApp`: one terminal session of wisp. It owns a `Runtime` (the same sessions,
settings, hooks, permission rules and MCP servers as print mode and the SDK), a
prompt_toolkit `Application` drawn inline, and the queue of prompts typed while the model
works.

Pieces: `view` (engine events → scrollback and live state), `layout` (the live region),
`keys` (key bindings), `permission` (the approval dialog), `commands` (slash commands),
`shell` (`!cmd`), `prompt_input` (completion, pastes, `@file` attachments, history).
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory

from wisp import paths
from wisp.jsontypes import JSON
from wisp.permissions.modes import PermissionMode
from wisp.runtime.config import RuntimeConfig
from wisp.tui.prompt_input import InputCompleter, Pastes, history_path, with_attachments
from wisp.tui.terminal import make_output, print_above

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.runtime.runtime import Runtime
    from wisp.tui.dialog import Picker
    from wisp.tui.permission import PermissionPrompt
    from wisp.tui.rewind import PromptMark
    from wisp.tui.view import ConversationView

FRAME_S = 1 / 30
MODE_CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan")
SPINNER = "✻✳✢·✢✳"
CLEAR_SCREEN = "\x1b[H\x1b[2J\x1b[3J"  # home, erase the screen, erase the scrollback
# OSC 52: "put this (base64) on the clipboard", which terminals, tmux and ssh pass along.
SET_CLIPBOARD = "\x1b]52;c;{}\x07"
TIMED_TURN_S = 3.0  # a turn at least this long ends with a line saying how long it took


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


def _short_folder(folder: str, env: Mapping[str, str], room: int) -> str:
    """The working folder in `room` columns: ~ for the home, then its start cut."""
    home = env.get("HOME", "")
    if home and (folder == home or folder.startswith(home.rstrip("/") + "/")):
        folder = "~" + folder[len(home.rstrip("/")):]
    return folder if len(folder) <= room else "…" + folder[-(room - 1):]


class TuiApp:
    # Set by `_load`, once the engine is imported; nothing runs a turn before that.
    runtime: Runtime
    view: ConversationView
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

    # Screen (for the view) -------------------------------------------------------------

    def print(self, ansi: str) -> None:
        self.tail_due = True  # the region drawn under it must not show what it printed
        print_above(self.app, self.output, ansi)  # type: ignore[arg-type]

    def invalidate(self) -> None:
        """The engine's output asks for a redraw: at most one per frame (1/30 s), however
        fast tokens come. Keys are not throttled: prompt_toolkit redraws after each one
        at once, reusing the streaming tail rendered for the last frame."""
        if self._frame_pending:
            return
        loop = asyncio.get_running_loop()
        delay = self._last_frame + FRAME_S - loop.time()
        if delay <= 0:
            self._frame()
        else:
            self._frame_pending = True
            loop.call_later(delay, self._frame)

    def _frame(self) -> None:
        self._frame_pending = False
        self._last_frame = asyncio.get_running_loop().time()
        self.tail_due = True
        self.app.invalidate()

    def width(self) -> int:
        return self.output.get_size().columns

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

    def _welcome(self) -> None:
        from prompt_toolkit import print_formatted_text
        from prompt_toolkit.formatted_text import FormattedText

        head, rest = self._welcome_parts()
        print_formatted_text(FormattedText([("bold", head), ("fg:ansibrightblack", rest)]),
                             output=self.output, style=None)

    def _welcome_parts(self) -> tuple[str, str]:
        """The header: its bold start and the rest, each line fitting the width."""
        from wisp import __version__
        from wisp.textsafe import safe

        width = self.width()
        hints = ("/help for commands · shift+tab to change mode · ctrl+d to exit"
                 if width >= 70 else "/help · ? for shortcuts · ctrl+d exits")
        return ("✻ wisp ", safe(f"{__version__} · {self.shown_model}")[:width - 8]
                + "\n  " + safe(_short_folder(str(self.config.cwd), self.env, width - 2))
                + "\n  " + hints)

    def refresh_status_line(self) -> None:
        """Runs the settings' status line command again (one at a time; a run still going
        is left to finish)."""
        if self._status_refresh is not None and not self._status_refresh.done():
            return
        from wisp.tui.status_line import refresh

        self._status_refresh = asyncio.ensure_future(refresh(self))

    def copy_to_clipboard(self, text: str) -> None:
        """/copy: the terminal puts `text` on the clipboard. It travels base64-encoded, so
        nothing in it can reach the terminal as a sequence of its own."""
        import base64

        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        with self.output.one_update():
            self.output.write_raw(SET_CLIPBOARD.format(encoded))

    def clear_screen(self) -> None:
        """/clear: the screen and tmux's or the terminal's scrollback emptied, the header
        drawn again at the top. (Erase sequences cannot pass `print_above`'s door, which
        lets colours only; they are written here, by wisp's own code.)"""
        from rich.text import Text

        from wisp.tui.render import Renderer

        with self.output.one_update():
            self.app.renderer.erase()
            self.output.write_raw(CLEAR_SCREEN)
            self.app.renderer.reset()
        head, rest = self._welcome_parts()
        header = Text(head, style="bold")
        header.append(rest, style="dim")
        self.print(Renderer(self.width(), self.env).ansi(header))

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

    # Prompts ---------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    @property
    def interruptible(self) -> bool:
        """A turn or a `!cmd` is running: Esc and Ctrl+C end it."""
        return self.busy or (self._shell is not None and not self._shell.done())

    def submit(self, raw: str) -> None:
        text = self.pastes.expand(raw).strip("\n")
        if not text.strip():
            return
        if not self.loaded.is_set():
            self.background(self._submit_when_loaded(text))
            return
        if text.startswith("/") and self.commands.handles(text):
            self.background(self.commands.run(text))
            return
        if text.startswith("!"):
            from wisp.tui.shell import run_shell

            self._shell = asyncio.ensure_future(run_shell(self, text[1:].strip()))
            return
        self.send(text)

    async def _submit_when_loaded(self, text: str) -> None:
        await self.loaded.wait()
        self.submit(text)

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs a command beside the input; kept referenced until it ends."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def send(self, text: str) -> None:
        """A prompt for the model: now, or after the turn in progress."""
        if self.busy:
            self.queue.append(text)
            self.invalidate()
            return
        self._turn = asyncio.ensure_future(self._run_turn(text))

    async def _run_turn(self, text: str) -> None:
        self._echo_prompt(text)
        content: str | list[JSON] = with_attachments(text, self.config.cwd)
        if self.pending_context:
            context, self.pending_context = "\n".join(self.pending_context), []
            content = ([{"type": "text", "text": context}, {"type": "text", "text": content}]
                       if isinstance(content, str) else [{"type": "text", "text": context},
                                                         *content])
        import uuid

        from wisp.tui.rewind import mark

        prompt_id = str(uuid.uuid4())
        mark(self, prompt_id, text)
        await self._working(self.runtime.run_prompt(content, uuid=prompt_id))

    def wake_turn(self) -> None:
        """A turn for background tasks that finished while nothing ran."""
        if not self.busy:
            self._turn = asyncio.ensure_future(self._working(self.runtime.run_notifications()))

    async def _working(self, run: Coroutine[Any, Any, Outcome | None]) -> None:
        """Runs a turn with the spinner going; then the next queued prompt, or the turn a
        background task that ended meanwhile is owed."""
        from wisp.errors import UsageError

        self.view.new_turn()
        self.busy_since = time.monotonic()
        self._spinner = asyncio.ensure_future(self._spin())
        try:
            outcome = await run
            if outcome is not None:
                self._report(outcome)
                self._took(time.monotonic() - self.busy_since)
        except UsageError as exc:  # a configuration error found mid-run
            self.view.print_text(f"Error: {exc}", "red")
        finally:
            self.busy_since = None
            self._spinner.cancel()
            self.invalidate()
            self.refresh_status_line()
        if self.queue:
            self._turn = asyncio.ensure_future(self._run_turn(self.queue.pop(0)))
        elif self.runtime.tasks.has_wake():
            self._turn = asyncio.ensure_future(self._working(self.runtime.run_notifications()))

    def _took(self, seconds: float) -> None:
        """The end of a long turn, with its time; a quick answer needs no such line."""
        if seconds < TIMED_TURN_S:
            return
        minutes, rest = divmod(round(seconds), 60)
        shown = f"{minutes}m {rest}s" if minutes else f"{rest}s"
        self.view.print_text(f"✻ Worked for {shown}", "dim")

    def _echo_prompt(self, text: str) -> None:
        from rich.text import Text

        from wisp.tui import render

        echo = Text("❯ ", style="bold")
        echo.append(render.safe(text).replace("\n", "\n  "))
        self.print(render.Renderer(self.width(), self.env).ansi(Text(""), echo))

    def _report(self, outcome: Outcome) -> None:
        from wisp.engine import outcome as oc

        if isinstance(outcome, oc.LimitHit):
            self.view.print_text(f"⎿ Stopped: {outcome.limit}", "yellow")
        elif isinstance(outcome, oc.Failed):
            self.view.print_text(f"⎿ {outcome.message}", "red")
        elif isinstance(outcome, oc.HookStopped) and outcome.terminal_reason is not None:
            # (a stopped prompt was already shown, with why, as the hook's notice)
            reason = f": {outcome.reason}" if outcome.reason else ""
            self.view.print_text(f"⎿ Stopped by a hook{reason}", "yellow")

    async def _spin(self) -> None:
        """While a turn runs, the spinner line ticks; nothing ticks when idle."""
        while True:
            await asyncio.sleep(0.1)
            self.invalidate()

    def interrupt(self) -> None:
        if self.dialog is not None:
            self.dialog.pick(None)
        if self._shell is not None and not self._shell.done():
            self._shell.cancel()
        if self.loaded.is_set():
            self.runtime.interrupt()

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
