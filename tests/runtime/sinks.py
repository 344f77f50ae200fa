"""What the runtime tests hand `Runtime.open` as its event sink: it keeps every event."""

from __future__ import annotations

from wisp.engine.events import Event


class Events:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
