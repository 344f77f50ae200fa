"""The queue of user prompts waiting for their turn.

Above: the stdin router puts prompts in, `interrupt` asks what is still queued (and may
cancel it). Below: the worker takes one prompt at a time. `None` from `get()` means stdin
is closed and nothing is left, so the session can end.
"""

from __future__ import annotations

import asyncio
from collections import deque

from wisp.jsontypes import JSON

# Where a queued frame keeps its prompt's message id (the client's `uuid`, else a new one).
# Apart from `uuid`, which only a client sets: only stamped prompts can be named in an
# interrupt receipt, as in the reference's.
PROMPT_UUID = "wisp_prompt_uuid"


class PromptQueue:
    def __init__(self) -> None:
        self._items: deque[JSON] = deque()
        self._changed = asyncio.Event()
        self._closed = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, frame: JSON) -> None:
        self._items.append(frame)
        self._changed.set()

    def close(self) -> None:
        """No more prompts will come (stdin EOF); `get` drains what is left, then None."""
        self._closed = True
        self._changed.set()

    @property
    def closed(self) -> bool:
        """stdin is closed: no prompt will be added (those queued still run)."""
        return self._closed

    async def get(self) -> JSON | None:
        while not self._items:
            if self._closed:
                return None
            self._changed.clear()
            await self._changed.wait()
        return self._items.popleft()

    def uuids(self) -> list[str]:
        """The uuids of queued prompts that carry one (SDK-stamped messages); prompts
        without a uuid still run but can't be named, as in the reference's receipt."""
        return [str(f["uuid"]) for f in self._items if isinstance(f.get("uuid"), str)]

    def cancel(self, uuid: str) -> bool:
        """`cancel_async_message`: drop the queued prompt with this uuid (the client's, or
        the one wisp stamped); False when none waits (it ran, or never came)."""
        for frame in self._items:
            if uuid in (frame.get("uuid"), frame.get(PROMPT_UUID)):
                self._items.remove(frame)
                return True
        return False

    def cancel_all(self) -> list[str]:
        """`interrupt` with `cancel_queued`: drop every queued prompt, naming those we can."""
        named = self.uuids()
        self._items.clear()
        return named
