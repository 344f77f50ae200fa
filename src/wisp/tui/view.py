"""The conversation view: engine events in, scrollback text and live state out.

`ConversationView` is the runtime's `EventSink` for the terminal UI. Finished things (a
paragraph of an answer, a tool call, its result) are rendered once and handed to
`Screen.print`; what is still changing (the streaming tail, thinking in progress, token
counts) is kept here for the live region, which reads it on each redraw. A subagent's
events arrive wrapped in `TaskProgress` and are shown indented under its Task call.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text

from wisp.engine import events as ev
from wisp.jsontypes import JSON
from wisp.tui import render, tool_summary
from wisp.tui.stream_text import Piece, StreamingMarkdown
from wisp.tui.tool_group import CallGroup, grouped

BIG_OUTPUT_CHARS = 20_000  # a result this long is also saved whole to a file
# Bash's marker for clipped output, naming the file that holds all of it.
_SAVED_IN = re.compile(r"characters truncated; all of it is in (\S+)\] \.\.\.")
INDENT = 4  # per subagent level


class Screen(Protocol):
    def print(self, ansi: str) -> None: ...
    def invalidate(self) -> None: ...
    def width(self) -> int: ...


class _Stream:
    """The text or thinking block a source (main agent or a subagent) is streaming."""

    __slots__ = ("kind", "markdown", "started", "thinking")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.started = time.monotonic()
        self.markdown = StreamingMarkdown()
        self.thinking: list[str] = []


class Collapsed:
    """The last thing shown shortened (a tool result, a thinking block, a group of calls
    whose `detail` is each call with its result): ctrl+o shows it whole."""

    __slots__ = ("detail", "indent", "is_error", "kind", "text")

    def __init__(self, kind: str, text: str, is_error: bool, indent: int,
                 detail: Text | None = None) -> None:
        self.kind, self.text, self.is_error, self.indent = kind, text, is_error, indent
        self.detail = detail


class ConversationView:
    def __init__(self, screen: Screen, env: dict[str, str], output_dir: str | None = None,
                 cwd: Path | None = None) -> None:
        self.screen = screen
        self.cwd = cwd or Path.cwd()
        self.calls: dict[str, tuple[str, JSON, int]] = {}  # tool_use id → name, input, depth
        self._last_call: str | None = None  # the call whose header was printed last
        self.env = env
        self.output_dir = output_dir
        self.streams: dict[str, _Stream] = {}  # by source ("" = the main agent)
        self.tasks: dict[str, int] = {}  # Task tool_use_id → its depth
        self.collapsed: Collapsed | None = None
        self.output_tokens = 0  # this turn, streamed so far (estimated until reported)
        self._estimated_chars = 0
        self.background: tuple[ev.TaskStarted, ...] = ()  # running in the background now
        self._background_ids: set[str] = set()
        self.verbose = False  # ctrl+o: thinking and results shown whole from now on
        self.group: CallGroup | None = None  # Read/Grep/Glob calls not printed yet

    # EventSink ---------------------------------------------------------------------------

    def emit(self, event: ev.Event) -> None:
        self._show(event, "", 0)
        self.screen.invalidate()

    def _show(self, event: ev.Event, source: str, depth: int) -> None:
        if isinstance(event, ev.TaskProgress):
            self._show(event.event, event.task_id, self.tasks.get(event.task_id, 0) + 1)
        elif isinstance(event, ev.StreamDelta):
            self._delta(event.event, source, depth)
        elif isinstance(event, ev.BlockShown):
            for block in event.blocks:
                self._block(block, source, depth)
        elif isinstance(event, ev.ToolResultReady):
            self._result(event, depth)
        elif isinstance(event, ev.TaskStarted):
            self.tasks[event.tool_use_id or event.task_id] = depth  # as TaskProgress names it
            kind = event.agent_type or "background command"
            self._note(f"⎿ {kind}: {event.description}", depth + 1)
        elif isinstance(event, ev.RunFinished):
            self.end_streams()
            self.flush_group()
        else:
            self._status_event(event, depth)

    def _status_event(self, event: ev.Event, depth: int) -> None:
        if isinstance(event, ev.Interrupted):
            self.end_streams()
            self._note("⎿ Interrupted · what should wisp do instead?", depth, "yellow")
        elif isinstance(event, ev.ApiErrorShown):
            self._note(f"⎿ {event.text}", depth, "red")
        elif isinstance(event, ev.ApiRetry):
            seconds = event.delay_ms / 1000
            self._note(f"⚠ {event.message or event.error} · retrying in {seconds:.1f}s "
                       f"(attempt {event.attempt}/{event.max_retries})", depth, "yellow")
        elif isinstance(event, ev.ModelFallback):
            self._note(f"⚠ {event.original} unavailable ({event.reason}): using "
                       f"{event.fallback}", depth, "yellow")
        elif isinstance(event, ev.ElicitationComplete):  # the user finished at the link
            self._note(f"⎿ {event.server}: {event.elicitation_id} is done", depth)
        elif isinstance(event, ev.Refused) and event.step == "fallback":
            # The refused answer above stays on screen (scrollback cannot be unwritten):
            # say it was withdrawn and who answers now.
            self._note(f"⚠ {event.facts['content']} (the answer above is withdrawn)", depth,
                       "yellow")
        # PermissionDenied needs no line of its own: the refused call's error result
        # follows and says the same.
        else:
            self._context_event(event, depth)

    def _context_event(self, event: ev.Event, depth: int) -> None:
        """Lines about the conversation itself: compaction, hooks' messages, tasks."""
        if isinstance(event, ev.Compacted):
            self._note(f"✻ Conversation compacted ({event.trigger}; it was "
                       f"{event.pre_tokens:,} tokens)", depth)
        elif isinstance(event, ev.CompactionFailed):
            self._note(f"⚠ Compaction failed: {event.error}", depth, "red")
        elif isinstance(event, ev.Informational):  # a hook's message, or why it stopped us
            warning = event.level == "warning"
            self._note(f"{'⚠' if warning else '⎿'} {event.content}", depth,
                       "yellow" if warning else "dim")
        elif isinstance(event, ev.TaskFinished):
            self._note(f"⎿ {_task_summary(event)}", depth + 1)
        else:
            self._background_event(event)

    def _background_event(self, event: ev.Event) -> None:
        """The footer's count of background tasks, and a line when one ends."""
        if isinstance(event, ev.BackgroundTasksChanged):
            self.background = event.tasks
            self._background_ids.update(t.task_id for t in event.tasks)
        elif isinstance(event, ev.TaskNotified) and event.task_id in self._background_ids:
            self._background_ids.discard(event.task_id)
            mark = "✓" if event.status == "completed" else "■" if (
                event.status == "stopped") else "✗"
            self._note(f"{mark} Background task {event.status}: {event.summary}", 0,
                       "green" if event.status == "completed" else "yellow")

    # Streaming ---------------------------------------------------------------------------

    def _delta(self, event: JSON, source: str, depth: int) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.streams.pop(source, None)  # a retried request streams its message again
            self._usage(event.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") in ("text", "thinking"):
                self.streams[source] = _Stream(str(block.get("type")))
        elif kind == "content_block_delta":
            self._grow(event.get("delta") or {}, source, depth)
        elif kind == "message_delta" and not source:
            usage = event.get("usage") or {}
            if isinstance(usage.get("output_tokens"), int):
                self.output_tokens = max(self.output_tokens, usage["output_tokens"])

    def _grow(self, delta: JSON, source: str, depth: int) -> None:
        stream = self.streams.get(source)
        text = delta.get("text") or delta.get("thinking") or delta.get("partial_json") or ""
        self._estimated_chars += len(text)
        self.output_tokens = max(self.output_tokens, self._estimated_chars // 4)
        if stream is None or not text:
            return
        if stream.kind == "thinking":
            stream.thinking.append(text)
            return
        stream.markdown.add(text)
        ready = stream.markdown.take()
        if ready:
            self._print_pieces(ready, depth)

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, dict) and isinstance(usage.get("output_tokens"), int):
            self.output_tokens = max(self.output_tokens, usage["output_tokens"])

    def live_tail(self) -> tuple[Piece | None, str, int]:
        """What is streaming now: the main agent's Markdown tail, or a thinking line."""
        for source, stream in self.streams.items():
            depth = self.tasks.get(source, -1) + 1 if source else 0
            if stream.kind == "thinking":
                return None, "".join(stream.thinking)[-200:], depth
            return stream.markdown.tail(), "", depth
        return None, "", 0

    def end_streams(self) -> None:
        for source in list(self.streams):
            stream = self.streams.pop(source)
            if stream.kind == "text":
                depth = self.tasks.get(source, -1) + 1 if source else 0
                self._print_pieces(stream.markdown.finish(), depth)

    def new_turn(self) -> None:
        self.output_tokens = 0
        self._estimated_chars = 0

    # Finished blocks ---------------------------------------------------------------------

    def show_block(self, block: JSON) -> None:
        """A finished block of the main agent (a resumed conversation's history, whose
        results are printed as they come: its calls are not grouped)."""
        self._block(block, "", 0, group=False)

    def _block(self, block: JSON, source: str, depth: int, group: bool = True) -> None:
        kind = block.get("type")
        stream = self.streams.pop(source, None)
        if kind == "text":
            if stream is not None and stream.kind == "text":
                self._print_pieces(stream.markdown.finish(), depth)
            else:
                whole = StreamingMarkdown()
                whole.add(str(block.get("text", "")))
                self._print_pieces(whole.finish(), depth)
        elif kind == "thinking":
            text = str(block.get("thinking", ""))
            seconds = (time.monotonic() - stream.started) if (
                stream is not None and stream.kind == "thinking") else None
            self.collapsed = Collapsed("thinking", text, False, depth * INDENT)
            self._print(render.thinking_block(text, self.verbose, depth * INDENT, seconds))
        elif kind == "tool_use":
            name, tool_input = str(block.get("name")), block.get("input") or {}
            call_id = str(block.get("id"))
            self.calls[call_id] = (name, tool_input if isinstance(tool_input, dict) else {},
                                   depth)
            if group and grouped(name) and not self.verbose:
                self._hold(call_id, name, self.calls[call_id][1], depth)
                return
            self._print(render.tool_call_line(name, tool_input, depth * INDENT, self.cwd),
                        gap=True)
            self._last_call = call_id

    def _result(self, event: ev.ToolResultReady, depth: int) -> None:
        block = event.block
        text = render.result_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        indent = depth * INDENT
        call_id = str(block.get("tool_use_id"))
        if self.group is not None and self.group.finish(call_id, text, is_error, event.data):
            self.calls.pop(call_id, None)
            return
        self.flush_group()  # before deciding whose header the result hangs under
        name, tool_input, _ = self.calls.pop(call_id, ("", {}, depth))
        if call_id != self._last_call and name:
            # Parallel calls: the result is hung under its own call, named again.
            self._print(render.tool_call_line(name, tool_input, indent, self.cwd), gap=True)
        self._show_result(name, tool_input, event.data, text, is_error=is_error,
                          indent=indent)

    def _show_result(self, name: str, tool_input: JSON, data: Any, text: str, *,
                     is_error: bool, indent: int) -> None:
        self.collapsed = Collapsed("result", text, is_error, indent)
        short = None if self.verbose else tool_summary.summary(
            name, tool_input, data, text, is_error=is_error, cwd=self.cwd)
        if short is not None:
            self._print(render.under_call(short, indent))
            return
        full_path = self._whole_output(text)
        self._print(render.result_block(text, is_error, indent, full_path=full_path,
                                        expanded=self.verbose, width=self.screen.width()))

    # Groups of looking-around calls (`wisp.tui.tool_group`) --------------------------

    def _hold(self, call_id: str, name: str, tool_input: JSON, depth: int) -> None:
        if self.group is not None and self.group.depth != depth:
            self.flush_group()
        self.group = self.group or CallGroup(depth)
        self.group.add(call_id, name, tool_input)

    def live_group(self) -> tuple[str, int] | None:
        """The group not printed yet, for the live region: its line and depth."""
        group = self.group
        if group is None:
            return None
        return group.headline(running=not all(c.done for c in group.calls)), group.depth

    def flush_group(self) -> None:
        """Prints the held calls: one line for the group (each call, if one failed or is
        still running: see `CallGroup.one_by_one`)."""
        group, self.group = self.group, None
        if group is None:
            return
        indent = group.depth * INDENT
        if not group.one_by_one():
            self._print(group.summary_line(indent), gap=True)
            self.collapsed = Collapsed("group", "", False, indent,
                                       group.detail(indent, self.cwd))
            return
        for call in group.calls:
            self._print(render.tool_call_line(call.name, call.input, indent, self.cwd),
                        gap=True)
            if call.done:
                self._show_result(call.name, call.input, call.data, call.text,
                                  is_error=call.is_error, indent=indent)
            else:
                self._last_call = call.call_id  # its result comes later, hung under it

    def _whole_output(self, text: str) -> str | None:
        """Where a long result can be read whole: the file a tool saved its clipped output
        in (Bash names it in its marker), or else, past BIG_OUTPUT_CHARS, a file of the
        result's text written here."""
        saved = _SAVED_IN.search(text)
        if saved:
            return saved.group(1)
        return self._save_big(text) if len(text) > BIG_OUTPUT_CHARS else None

    def _save_big(self, text: str) -> str | None:
        """A file of a name made here: never one built from the tool_use id, which the
        model chose (`../../x` or `/tmp/x` would write wherever it pointed)."""
        folder = self.output_dir or tempfile.gettempdir()
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, path = tempfile.mkstemp(dir=folder, prefix="result-", suffix=".txt")
            with open(fd, "w", encoding="utf-8", errors="replace") as handle:
                handle.write(text)
        except OSError:
            return None
        return path

    def expand_last(self) -> None:
        item = self.collapsed
        if item is None:
            self._print(render.note("(nothing to expand)"))
        elif item.detail is not None:
            self._print(item.detail)
        elif item.kind == "thinking":
            self._print(render.thinking_block(item.text, True, item.indent))
        else:
            self._print(render.result_block(item.text, item.is_error, item.indent,
                                            expanded=True))

    # Printing ----------------------------------------------------------------------------

    def _print_pieces(self, pieces: list[Piece], depth: int) -> None:
        if not pieces:
            return
        self.flush_group()
        self._last_call = None
        renderer = render.Renderer(self.screen.width(), self.env)
        self.screen.print("".join(("" if p.continued else "\n") + renderer.piece(
            p, depth * INDENT) for p in pieces))

    def _print(self, text: Text, gap: bool = False) -> None:
        self.flush_group()  # what came before this is printed before it
        self._last_call = None
        ansi = render.Renderer(self.screen.width(), self.env).ansi(text)
        self.screen.print("\n" + ansi if gap else ansi)

    def _note(self, text: str, depth: int, style: str = "dim") -> None:
        self._print(Text(" " * (depth * INDENT)) + render.note(text, style))

    def print_text(self, text: str | Text, style: str = "") -> None:
        """For commands and the UI's own messages."""
        self._print(text if isinstance(text, Text) else render.note(text, style))


def _task_summary(event: ev.TaskFinished) -> str:
    stats = event.stats
    seconds = stats.duration_ms / 1000
    return f"done ({stats.num_turns} turns · {seconds:.1f}s)"
