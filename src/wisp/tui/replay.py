"""Showing a resumed conversation: its history printed once into the scrollback, in the
same form as it looked live (prompts, answers, tool calls, shortened results)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from wisp.jsontypes import JSON
from wisp.tui import render

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

SHOWN_MESSAGES = 100  # the most recent ones; older ones are only counted


def replay_history(app: TuiApp, history: Sequence[JSON]) -> None:
    skipped = max(0, len(history) - SHOWN_MESSAGES)
    renderer = render.Renderer(app.width(), app.env)
    if skipped:
        app.print(renderer.ansi(render.note(f"… {skipped} earlier messages")))
    for message in history[skipped:]:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
        if message.get("role") == "user":
            _user(app, renderer, blocks)
        else:
            for block in blocks:
                if isinstance(block, dict):
                    app.view.show_block(block)
    app.print(renderer.ansi(render.note("── resumed ──")))


def _user(app: TuiApp, renderer: render.Renderer, blocks: list[Any]) -> None:
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            text = render.result_text(block.get("content"))
            app.print(renderer.ansi(render.result_block(text, bool(block.get("is_error")))))
        elif block.get("type") == "text":
            echo = Text("❯ ", style="bold")
            echo.append(render.safe(str(block.get("text", ""))))
            app.print(renderer.ansi(Text(""), echo))
