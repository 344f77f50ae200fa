"""The model seam. The engine above calls `Model.stream`; below is HTTP+SSE (or a replay).

A provider yields raw Anthropic streaming events (`message_start`, `content_block_start`,
`content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`) as dicts,
and raises `wisp.errors.ModelAPIError` subclasses on failure. `ping` events are dropped
by the provider. The complete message is `wisp.models.accumulate.fold` over the events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Protocol

from wisp.jsontypes import JSON
from wisp.values import Record, field


class ModelRequest(Record):
    """One Messages API request. A message in `messages` must not be changed in place once
    it has been sent: the provider encodes each message once and knows it by identity
    (`wisp.models.body`), so replace it with a new dict instead."""

    model: str
    messages: list[JSON]
    max_tokens: int
    system: list[JSON] = field(default_factory=list)
    tools: list[JSON] = field(default_factory=list)
    thinking: JSON | None = None
    metadata: JSON | None = None
    session_id: str | None = None
    # More body fields (output_config, context_management: `wisp.models.shape`), and the
    # betas they need; the Anthropic provider sends these betas with its own.
    extra: JSON = field(default_factory=dict)
    betas: tuple[str, ...] = ()

    def body(self) -> JSON:
        body: JSON = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
            "stream": True,
        }
        if self.system:
            body["system"] = self.system
        if self.tools:
            body["tools"] = self.tools
        if self.thinking is not None:
            body["thinking"] = self.thinking
        if self.metadata is not None:
            body["metadata"] = self.metadata
        body.update(self.extra)
        return body


class ModelStream(Protocol):
    """An open streaming response. Iterate it for events; close it to drop the connection."""

    request_id: str | None

    def __aiter__(self) -> AsyncIterator[JSON]: ...

    async def __aenter__(self) -> ModelStream: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Model(Protocol):
    def stream(self, request: ModelRequest) -> ModelStream:
        """Open a streaming request. HTTP errors raise on `__aenter__` or during iteration."""
        ...


async def close_readers(readers: list[Any]) -> None:
    """Closes the async generators reading a response body, outermost first (each is
    suspended inside the next). Left to the garbage collector, each would cost a task of
    its own (asyncio's async-generator finalizer); one that another task is iterating
    right now ends on its own once the response is closed, and closing it here would
    raise."""
    for reader in readers:
        if not getattr(reader, "ag_running", False):
            await reader.aclose()
