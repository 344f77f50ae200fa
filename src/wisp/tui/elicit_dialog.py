"""The terminal UI's answer when an MCP server asks the user mid-call (`elicitation/create`,
after `Elicitation` hooks had their say: `wisp.runtime.elicitation`).

A URL request shows the server's message and the link (wisp opens nothing itself): 1 says
the user will go there (accept), 2 declines. A form shows the message and its fields: 1
answers, field by field (a choice list for enums and booleans, a text field for the rest,
numbers checked), 2 declines. Esc at any point cancels. One dialog at a time, shared with
the permission prompt.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from wisp.jsontypes import JSON
from wisp.textsafe import safe
from wisp.tui.dialog import Picker

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

CANCEL: JSON = {"action": "cancel"}
DECLINE: JSON = {"action": "decline"}


class ElicitDialog:
    def __init__(self, app: TuiApp, one_at_a_time: asyncio.Lock) -> None:
        self.app = app
        self._lock = one_at_a_time

    async def __call__(self, server: str, params: JSON) -> JSON:
        async with self._lock:
            answer = await self._ask(server, params)
        self.app.view.print_text(f"  {safe(server)}: {answer['action']}", "dim")
        return answer

    async def _ask(self, server: str, params: JSON) -> JSON:
        url = params.get("url") if params.get("mode") == "url" else None
        schema = params.get("requestedSchema")
        fields: JSON = schema.get("properties") or {} if isinstance(schema, dict) else {}
        lines: list[RenderableType] = [
            Text(f"The MCP server {safe(server)} asks:", style="bold yellow"),
            Padding(Text(safe(str(params.get("message") or ""))), (0, 0, 0, 2))]
        if isinstance(url, str):
            lines.append(Padding(Text(safe(url), style="underline"), (0, 0, 0, 2)))
            choices = ["Yes, I'll open the link", "No (decline)"]
        else:
            lines.extend(Padding(Text(_describe(name, spec), style="dim"), (0, 0, 0, 2))
                         for name, spec in fields.items() if isinstance(spec, dict))
            choices = ["Answer", "No (decline)"]
        picker = Picker(Group(*lines), choices, refusal=1, question="Do you want to go on?")
        choice = await self.app.show_dialog(picker)
        if choice is None:
            return dict(CANCEL)
        if choice == 1:
            return dict(DECLINE)
        if isinstance(url, str):
            return {"action": "accept"}
        required = schema.get("required") if isinstance(schema, dict) else None
        return await self._fill(server, fields, required if isinstance(required, list) else [])

    async def _fill(self, server: str, fields: JSON, required: list[Any]) -> JSON:
        content: JSON = {}
        for name, spec in fields.items():
            value = await self._field(server, name, spec if isinstance(spec, dict) else {},
                                      name in required)
            if value is _CANCELLED:
                return dict(CANCEL)
            if value is not None:
                content[name] = value
        return {"action": "accept", "content": content}

    async def _field(self, server: str, name: str, spec: JSON, required: bool) -> Any:
        title = Text(f"{safe(server)} · {_describe(name, spec)}", style="bold yellow")
        options = _options(spec)
        if options:
            picker = Picker(title, [safe(label) for label, _ in options])
            choice = await self.app.show_dialog(picker)
            return _CANCELLED if choice is None else options[choice][1]
        hint = ""
        while True:
            picker = Picker(Group(title, Text(hint, style="red")) if hint else title, [],
                            question="Type the answer, Enter to send, Esc to cancel")
            picker.field, picker.editing = name, True
            self._focus_field(spec)
            if await self.app.show_dialog(picker) is None:
                return _CANCELLED
            value, hint = _parsed(picker.text, spec, required)
            if not hint:
                return value

    def _focus_field(self, spec: JSON) -> None:
        from wisp.tui.keys import rule_buffer

        buffer = rule_buffer(self.app)
        default = spec.get("default")
        buffer.text = "" if default is None else str(default)
        buffer.cursor_position = len(buffer.text)
        self.app.app.layout.focus(buffer)


_CANCELLED = object()


def _describe(name: str, spec: JSON) -> str:
    kind = spec.get("type") or "string"
    about = spec.get("description") or spec.get("title") or ""
    return f"{name} ({kind})" + (f": {about}" if about else "")


def _options(spec: JSON) -> list[tuple[str, Any]]:
    """The choices of an enum or boolean field, as (label, value)."""
    if spec.get("type") == "boolean":
        return [("Yes", True), ("No", False)]
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return [(str(label), value) for label, value in zip(labels, enum, strict=True)]
    one_of = spec.get("oneOf")
    if isinstance(one_of, list):
        return [(str(o.get("title", o.get("const"))), o.get("const")) for o in one_of
                if isinstance(o, dict) and "const" in o]
    return []


def _parsed(text: str, spec: JSON, required: bool) -> tuple[Any, str]:
    """The typed value and no hint, or a hint saying what is wrong."""
    if not text.strip():
        return (None, "") if not required else (None, "an answer is required")
    kind = spec.get("type")
    if kind in ("number", "integer"):
        try:
            return (int(text) if kind == "integer" else float(text)), ""
        except ValueError:
            return None, f"a{'n integer' if kind == 'integer' else ' number'} is needed"
    return text, ""
