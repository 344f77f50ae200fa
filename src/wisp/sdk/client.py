"""`ClaudeSDKClient`: a conversation over many turns, with controls between them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from wisp.sdk._conversation import Conversation
from wisp.sdk.errors import CLIConnectionError
from wisp.sdk.types import (
    ClaudeAgentOptions,
    ContextUsageResponse,
    McpStatusResponse,
    Message,
    PermissionMode,
    ResultMessage,
)


class ClaudeSDKClient:
    """Connect, then `query()` and `receive_response()` as many times as needed.

    In-process by default; with `options.cli_path`, drives that CLI as a subprocess.
    Use it as an async context manager, or call `connect()` and `disconnect()`.
    """

    def __init__(self, options: ClaudeAgentOptions | None = None,
                 transport: Any = None) -> None:
        self.options = options if options is not None else ClaudeAgentOptions()
        self._transport = transport  # `wisp.sdk.transport.Transport`: the agent's link
        self._conversation: Conversation | None = None

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None
                      ) -> None:
        if self._conversation is not None:
            return
        conversation = Conversation(self.options, self._transport)
        self._conversation = conversation
        try:
            await conversation.open()
            if isinstance(prompt, str):
                await conversation.send_user(prompt, session_id="default")
            elif prompt is not None:
                conversation.spawn(conversation.stream_input(prompt, end=False))
        except BaseException:
            await self.disconnect()
            raise

    def _connected(self) -> Conversation:
        if self._conversation is None:
            raise CLIConnectionError("Not connected. Call connect() first.")
        return self._conversation

    async def query(self, prompt: str | AsyncIterable[dict[str, Any]],
                    session_id: str = "default") -> None:
        conversation = self._connected()
        if isinstance(prompt, str):
            await conversation.send_user(prompt, session_id)
            return
        async for message in prompt:
            stamped = message if "session_id" in message else {**message,
                                                               "session_id": session_id}
            await conversation.send_message(stamped)

    async def receive_messages(self) -> AsyncIterator[Message]:
        async for message in self._connected().messages():
            yield message

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next `ResultMessage`."""
        messages = self._connected().messages()
        try:
            async for message in messages:
                yield message
                if isinstance(message, ResultMessage):
                    return
        finally:
            # Closed here, not left to the garbage collector (which costs a task a turn).
            await messages.aclose()

    # Controls ------------------------------------------------------------------------

    async def interrupt(self) -> None:
        await self._connected().request({"subtype": "interrupt"})

    async def set_permission_mode(self, mode: PermissionMode) -> None:
        await self._connected().request({"subtype": "set_permission_mode", "mode": mode})

    async def set_model(self, model: str | None = None) -> None:
        await self._connected().request({"subtype": "set_model", "model": model})

    async def rewind_files(self, user_message_id: str) -> None:
        await self._connected().request(
            {"subtype": "rewind_files", "user_message_id": user_message_id})

    async def reconnect_mcp_server(self, server_name: str) -> None:
        await self._connected().request({"subtype": "mcp_reconnect", "serverName": server_name})

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        await self._connected().request(
            {"subtype": "mcp_toggle", "serverName": server_name, "enabled": enabled})

    async def stop_task(self, task_id: str) -> None:
        await self._connected().request({"subtype": "stop_task", "task_id": task_id})

    async def get_mcp_status(self) -> McpStatusResponse:
        answer: Any = await self._connected().request({"subtype": "mcp_status"})
        return answer  # type: ignore[no-any-return]

    async def get_context_usage(self) -> ContextUsageResponse:
        answer: Any = await self._connected().request({"subtype": "get_context_usage"})
        return answer  # type: ignore[no-any-return]

    async def get_server_info(self) -> dict[str, Any] | None:
        """The agent's answer to `initialize` (commands, agents, models, …)."""
        return self._connected().server_info

    # Ending --------------------------------------------------------------------------

    async def disconnect(self) -> None:
        """Ends the session. A turn still running is interrupted; nothing it started is
        left running when this returns."""
        conversation, self._conversation = self._conversation, None
        if conversation is None:
            return
        # A turn still running is interrupted rather than waited for.
        task = asyncio.ensure_future(conversation.close(force=not conversation.idle))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await task
            raise

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        await self.disconnect()
        return False
