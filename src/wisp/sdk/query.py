"""`query()`: one run of the agent, from a prompt to its result.

Cancellation: cancelling the task that iterates `query()` (or leaving the loop and
closing the generator) stops the run. A turn in progress is interrupted, the processes
its tools started are killed, and the transcript written so far stays resumable
(`resume=<session id>`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from wisp.sdk._conversation import Conversation
from wisp.sdk.types import ClaudeAgentOptions, Message


async def query(*, prompt: str | AsyncIterable[dict[str, Any]],
                options: ClaudeAgentOptions | None = None,
                transport: Any = None) -> AsyncIterator[Message]:
    """Runs `prompt` and yields every message until the run is over.

    In-process by default; with `options.cli_path`, drives that CLI as a subprocess; with
    `transport` (`wisp.sdk.transport.Transport`), speaks over it instead.
    A prompt given as an async iterable of user-message dicts streams them in.
    """
    conversation = Conversation(options if options is not None else ClaudeAgentOptions(),
                                transport)
    finished = False
    try:
        await conversation.open()
        if isinstance(prompt, str):
            await conversation.send_user(prompt, session_id="")
            conversation.spawn(conversation.finish_input())
        else:
            conversation.spawn(conversation.stream_input(prompt))
        async for message in conversation.messages():
            yield message
        finished = True
    finally:
        # Not finished: the consumer was cancelled, left early, or an error is on its way.
        await _close(conversation, force=not finished)


async def _close(conversation: Conversation, force: bool) -> None:
    task = asyncio.ensure_future(conversation.close(force=force))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task  # cancelled again while closing: still leave nothing behind
        raise
