"""`system/session_state_changed` frames, sent only when the SDK asked for them.

Both SDKs close stdin (ending the session) once they see `idle` after a result, so `idle`
must never be reported early or while prompts are still queued (docs/protocol.md, "Session state and
when stdin closes").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from wisp.wire import frames
from wisp.wire.writer import FrameSink

State = Literal["idle", "running", "requires_action"]
# Newer SDKs set the first; Zed's ACP adapter (on an older SDK) sets the second, and ends
# each editor turn on `idle`, so without it a turn never ends in the editor.
_ASKED_BY = ("CLAUDE_CODE_SDK_READS_SESSION_STATE", "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS")


def reads_session_state(env: Mapping[str, str]) -> bool:
    return any(env.get(name) == "1" for name in _ASKED_BY)


def cancel_ends_on_result(env: Mapping[str, str]) -> bool:
    """Zed's adapter (it asks with the second variable alone) ends a cancelled editor turn
    on its result, and every other turn on `idle`: an `idle` after an interrupted turn's
    result would still be unread when the next prompt starts, and end that one before
    its answer. The SDKs (the first variable) need that `idle` to close stdin."""
    return env.get(_ASKED_BY[1]) == "1" and env.get(_ASKED_BY[0]) != "1"


class StateReporter:
    def __init__(self, sink: FrameSink, session_id: Callable[[], str], enabled: bool) -> None:
        self._sink = sink
        self._session_id = session_id
        self.enabled = enabled
        self.state: State = "idle"
        self._waiting = 0

    def set(self, state: State) -> None:
        if state == self.state:
            return
        self.state = state
        if self.enabled:
            self._sink.write(
                frames.system(
                    "session_state_changed", self._session_id(), state=state, sdk_host_only=True
                )
            )

    def begin_wait(self) -> None:
        """A request to the host is outstanding (e.g. can_use_tool)."""
        self._waiting += 1
        self.set("requires_action")

    def end_wait(self) -> None:
        self._waiting = max(0, self._waiting - 1)
        if self._waiting == 0 and self.state == "requires_action":
            self.set("running")
