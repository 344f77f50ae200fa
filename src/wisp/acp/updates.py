"""The engine's events as ACP `session/update` notifications: the editor's face of a turn.

Above: the engine, through the `EventSink` a `Runtime` is opened with. Below: the
connection (`send(update)`). Text and thinking stream as `agent_message_chunk` and
`agent_thought_chunk` from the model's deltas; a tool call is a `tool_call` (with the
file it reads or the diff it makes) and its result a `tool_call_update`; TodoWrite's
list is a `plan`; a run's end is a `usage_update`. Each event is turned into its update
as it comes, with no buffering: the editor sees what the engine saw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wisp.engine.events import BlockShown, RunFinished, StreamDelta, ToolResultReady
from wisp.jsontypes import JSON

Send = Callable[[JSON], None]
CONTEXT_WINDOW = 200_000
_KINDS = {"Read": "read", "Write": "edit", "Edit": "edit", "Bash": "execute",
          "Grep": "search", "Glob": "search", "WebFetch": "fetch", "WebSearch": "fetch",
          "Task": "think", "Agent": "think"}
_DELTAS = {"text_delta": ("agent_message_chunk", "text"),
           "thinking_delta": ("agent_thought_chunk", "thinking")}


def text_update(kind: str, text: str) -> JSON:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def tool_call(block: JSON, cwd: str) -> JSON:
    """A `tool_use` block as the editor shows it: a title, a kind, and where it acts."""
    name, data = str(block.get("name", "")), block.get("input") or {}
    update: JSON = {"sessionUpdate": "tool_call", "toolCallId": block.get("id", ""),
                    "title": _title(name, data), "kind": _KINDS.get(name, "other"),
                    "status": "pending", "rawInput": data}
    path = data.get("file_path") if isinstance(data, dict) else None
    if isinstance(path, str):
        location: JSON = {"path": path}
        if isinstance(data.get("offset"), int):
            location["line"] = data["offset"]
        update["locations"] = [location]
    diff = _diff(name, data)
    if diff is not None:
        update["content"] = [diff]
    return update


def _title(name: str, data: Any) -> str:
    if not isinstance(data, dict):
        return name
    for key in ("command", "file_path", "pattern", "url", "description"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return f"{name} {value}" if key != "command" else value
    return name


def _diff(name: str, data: Any) -> JSON | None:
    if not isinstance(data, dict) or not isinstance(data.get("file_path"), str):
        return None
    if name == "Write" and isinstance(data.get("content"), str):
        return {"type": "diff", "path": data["file_path"], "oldText": None,
                "newText": data["content"]}
    if name == "Edit" and isinstance(data.get("new_string"), str):
        return {"type": "diff", "path": data["file_path"],
                "oldText": data.get("old_string") or None, "newText": data["new_string"]}
    return None


def result_update(block: JSON) -> JSON:
    """A `tool_result` block: the call's end, with what it gave the model as text."""
    content = block.get("content")
    if isinstance(content, list):
        text = "\n".join(str(c.get("text", "")) for c in content
                         if isinstance(c, dict) and c.get("type") == "text")
    else:
        text = str(content or "")
    update: JSON = {"sessionUpdate": "tool_call_update",
                    "toolCallId": block.get("tool_use_id", ""),
                    "status": "failed" if block.get("is_error") else "completed"}
    if text:
        update["content"] = [{"type": "content", "content": {"type": "text", "text": text}}]
    return update


def plan_update(todos: Any) -> JSON:
    """TodoWrite's list as an ACP plan (the whole list, each time: ACP replaces it)."""
    entries = [{"content": str(t.get("content", "")), "priority": "medium",
                "status": t.get("status") if t.get("status") in (
                    "pending", "in_progress", "completed") else "pending"}
               for t in (todos if isinstance(todos, list) else []) if isinstance(t, dict)]
    return {"sessionUpdate": "plan", "entries": entries}


class UpdateProjection:
    """An `EventSink`: what a turn does, told to the editor as it happens."""

    def __init__(self, send: Send, cwd: str) -> None:
        self._send = send
        self._cwd = cwd

    def emit(self, event: object) -> None:
        if isinstance(event, StreamDelta):
            self._delta(event.event)
        elif isinstance(event, BlockShown):
            for block in event.blocks:
                self._block(block)
        elif isinstance(event, ToolResultReady):
            self._send(result_update(event.block))
        elif isinstance(event, RunFinished):
            self._usage(event)

    def _delta(self, event: JSON) -> None:
        delta = event.get("delta") if event.get("type") == "content_block_delta" else None
        if not isinstance(delta, dict):
            return
        found = _DELTAS.get(str(delta.get("type")))
        if found is not None and delta.get(found[1]):
            self._send(text_update(found[0], str(delta[found[1]])))

    def _block(self, block: JSON) -> None:
        if block.get("type") != "tool_use":
            return  # text and thinking came as deltas already
        if block.get("name") == "TodoWrite":
            self._send(plan_update((block.get("input") or {}).get("todos")))
        self._send(tool_call(block, self._cwd))

    def _usage(self, event: RunFinished) -> None:
        ledger = event.stats.session_usage
        totals = ledger.totals()
        used = sum(int(totals.get(name) or 0) for name in (
            "input_tokens", "output_tokens", "cache_read_input_tokens",
            "cache_creation_input_tokens"))
        windows = [m.get("contextWindow") for m in ledger.model_usage().values()]
        size = min((w for w in windows if isinstance(w, int)), default=CONTEXT_WINDOW)
        self._send({"sessionUpdate": "usage_update", "used": used, "size": size,
                    "cost": {"amount": ledger.cost_usd, "currency": "USD"}})
