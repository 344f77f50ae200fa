"""How an SDK session opens (`wisp.sdk._conversation`): the `initialize` request, with the
caller's hooks registered for the agent to call back, how long its answer may take, and
the check that the agent can honour hooks that must block when they fail.
"""

from __future__ import annotations

import os
from typing import Any

from wisp.jsontypes import JSON
from wisp.sdk._host import HostAnswers
from wisp.sdk._launch import Launch
from wisp.sdk.errors import CLIConnectionError


def initialize_timeout(env: dict[str, str]) -> float:
    """As the official SDK: CLAUDE_CODE_STREAM_CLOSE_TIMEOUT (ms), never under 60 s."""
    raw = env.get("CLAUDE_CODE_STREAM_CLOSE_TIMEOUT") or os.environ.get(
        "CLAUDE_CODE_STREAM_CLOSE_TIMEOUT", "60000")
    try:
        return max(int(raw) / 1000.0, 60.0)
    except ValueError:
        return 60.0


class OpeningHandshake:
    """The `initialize` half of a conversation: what it sends, and what it requires of the
    answer. A base of `Conversation`, which sets these attributes."""

    options: Any
    launch: Launch
    host: HostAnswers

    def _initialize_request(self) -> JSON:
        hooks: JSON = {}
        for event, matchers in (self.options.hooks or {}).items():
            entries = [self._hook_entry(m) for m in matchers or []]
            if entries:
                hooks[event] = entries
        return {"subtype": "initialize", "hooks": hooks or None, **self.launch.initialize}

    def _hook_entry(self, matcher: Any) -> JSON:
        ids = []
        for callback in matcher.hooks:
            ids.append(self.host.register_hook(callback))
        entry: JSON = {"matcher": matcher.matcher, "hookCallbackIds": ids}
        if matcher.timeout is not None:
            entry["timeout"] = matcher.timeout
        on_failure = getattr(matcher, "on_failure", None)
        if on_failure is not None:
            entry["onFailure"] = on_failure
        return entry

    def _check_hook_failure_support(self, answer: JSON) -> None:
        # A hook meant to block on failure must not silently fail open.
        blocking = any(getattr(m, "on_failure", None) not in (None, "continue")
                       for ms in (self.options.hooks or {}).values() for m in ms or [])
        if not blocking:
            return
        if not answer.get("hook_on_failure_supported"):
            raise CLIConnectionError(
                'The agent does not support on_failure="block" on hook matchers, so a '
                "failing hook would not block. Remove on_failure or update the CLI.")
        if answer.get("hooks_applied") is False:
            raise CLIConnectionError(
                "The session was already running and did not register these hooks, so "
                'a hook with on_failure="block" would never run.')


__all__ = ["OpeningHandshake", "initialize_timeout"]
