"""Tracks which parts of a streamed message a client has seen, so an abandoned stream
(interrupt, retry after a cut, fallback) can be closed with synthetic events and no
consumer is left "mid-block"."""

from __future__ import annotations

from wisp.jsontypes import JSON


class OpenStream:
    def __init__(self) -> None:
        self.message_id: str | None = None
        self.message_open = False
        self.open_blocks: list[int] = []

    def observe(self, event: JSON) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.message_open = True
            self.message_id = (event.get("message") or {}).get("id")
        elif kind == "content_block_start":
            self.open_blocks.append(int(event.get("index", 0)))
        elif kind == "content_block_stop":
            index = int(event.get("index", 0))
            if index in self.open_blocks:
                self.open_blocks.remove(index)
        elif kind == "message_stop":
            self.message_open = False
            self.open_blocks.clear()

    def closing_events(self) -> list[JSON]:
        """The events that close whatever is still open, and reset the tracker."""
        if not self.message_open:
            return []
        events: list[JSON] = [{"type": "content_block_stop", "index": i} for i in self.open_blocks]
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": None, "stop_sequence": None},
                "usage": {"output_tokens": 0},
            }
        )
        events.append({"type": "message_stop"})
        self.open_blocks.clear()
        self.message_open = False
        return events
