"""Custom transports: `query(..., transport=...)` and `ClaudeSDKClient(options, transport)`
with the official SDK's `Transport` contract. A transport moves stream-json to an agent
somewhere (a remote `wisp serve`, a container, a test double): wisp.sdk speaks the
control protocol over it exactly as over its own links (`wisp.sdk._conversation`).

`Transport` is the abstract class to subclass (`connect`, `write`, `read_messages`,
`close`, `is_ready`, `end_input`); an object of the official SDK's `Transport` works too,
as the contract is the same. The options' launch settings (flags, environment) are the
transport's business: a transport starts (or reaches) its agent as it sees fit.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any, Protocol

from wisp.jsontypes import JSON


class Transport(ABC):
    """Raw I/O with one agent session: stream-json frames, one JSON object per line."""

    @abstractmethod
    async def connect(self) -> None:
        """Start the agent, or reach it."""

    @abstractmethod
    async def write(self, data: str) -> None:
        """One or more lines of JSON, each ending in a newline."""

    @abstractmethod
    def read_messages(self) -> AsyncIterator[JSON]:
        """The agent's frames, parsed, until it ends."""

    @abstractmethod
    async def close(self) -> None:
        """Let go of the agent; must not block for ever."""

    @abstractmethod
    def is_ready(self) -> bool:
        """Connected and not closed."""

    @abstractmethod
    async def end_input(self) -> None:
        """No more input (stdin EOF for a process)."""


class Link(Protocol):
    """Carries frames between the SDK and one agent session."""

    async def start(self) -> None: ...

    async def send(self, frame: JSON) -> None: ...

    async def end_input(self) -> None: ...

    def frames(self) -> AsyncIterator[JSON]: ...

    async def wait(self) -> int: ...

    def stderr_text(self) -> str: ...

    async def close(self, force: bool) -> None: ...


class TransportLink:
    """A caller's transport as the link a conversation runs over."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport

    async def start(self) -> None:
        await self.transport.connect()

    async def send(self, frame: JSON) -> None:
        await self.transport.write(json.dumps(frame) + "\n")

    async def end_input(self) -> None:
        await self.transport.end_input()

    async def frames(self) -> AsyncIterator[JSON]:
        async for frame in self.transport.read_messages():
            if isinstance(frame, dict):
                yield frame

    async def wait(self) -> int:
        return 0  # a transport says nothing of an exit status: its stream just ends

    def stderr_text(self) -> str:
        return ""

    async def close(self, force: bool) -> None:
        await self.transport.close()
