"""Prompts and turns for `TuiApp`: what a submitted line becomes (a slash command, a
`!cmd`, or a prompt for the model, queued while a turn runs), the turn with its spinner
and closing lines, and interrupting it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast

from wisp.jsontypes import JSON
from wisp.tui.prompt_input import with_attachments
from wisp.tui.screen import Screen

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.runtime.runtime import Runtime
    from wisp.tui.app import TuiApp
    from wisp.tui.commands import CommandSet
    from wisp.tui.dialog import Picker
    from wisp.tui.prompt_input import Pastes
    from wisp.tui.view import ConversationView

TIMED_TURN_S = 3.0  # a turn at least this long ends with a line saying how long it took


class Turns(Screen):
    """Running prompts for `TuiApp`, which sets the state below."""

    # Set by `_load`, once the engine is imported; nothing runs a turn before that.
    runtime: Runtime
    view: ConversationView
    commands: CommandSet
    pastes: Pastes
    loaded: asyncio.Event
    queue: list[str]
    pending_context: list[str]
    dialog: Picker | None
    busy_since: float | None
    _turn: asyncio.Task[None] | None
    _spinner: asyncio.Task[None] | None
    _background: set[asyncio.Task[None]]
    _shell: asyncio.Future[None] | None
    _status_refresh: asyncio.Future[None] | None

    def _tui(self) -> TuiApp:
        """This object as the `TuiApp` it is part of: the helpers it hands itself to
        (`!cmd`, rewind marks, the status line) take one."""
        return cast("TuiApp", self)

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

            self._shell = asyncio.ensure_future(run_shell(self._tui(), text[1:].strip()))
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
        mark(self._tui(), prompt_id, text)
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

    def refresh_status_line(self) -> None:
        """Runs the settings' status line command again (one at a time; a run still going
        is left to finish)."""
        if self._status_refresh is not None and not self._status_refresh.done():
            return
        from wisp.tui.status_line import refresh

        self._status_refresh = asyncio.ensure_future(refresh(self._tui()))
