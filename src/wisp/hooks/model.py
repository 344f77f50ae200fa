"""Hook configuration and the merged outcome of running the hooks of one event."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
    "SubagentStart", "SubagentStop", "PreCompact", "SessionStart", "SessionEnd",
    "Notification", "PermissionRequest",
)
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class CommandHook:
    command: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    source: str = "settings"


@dataclass(frozen=True)
class CallbackHook:
    callback_id: str
    timeout_s: float | None = None


HookAction = CommandHook | CallbackHook


@dataclass(frozen=True)
class HookMatcher:
    event: str
    matcher: str | None
    actions: tuple[HookAction, ...]

    def matches(self, target: str | None) -> bool:
        """Matchers are regexes on the tool name; empty, None and "*" match everything."""
        if not self.matcher or self.matcher == "*" or target is None:
            return True
        try:
            return re.fullmatch(self.matcher, target) is not None
        except re.error:
            return self.matcher == target


@dataclass
class HookOutcome:
    """The merge of every hook that ran for one event. Denials win over allows; a block
    by any hook blocks; contexts and messages accumulate."""

    blocked: bool = False
    reason: str | None = None
    permission_decision: str | None = None  # allow | deny | ask
    updated_input: JSON | None = None
    additional_context: list[str] = field(default_factory=list)
    stop: bool = False  # `continue: false`: end the run now
    stop_reason: str | None = None
    system_messages: list[str] = field(default_factory=list)
    updated_output: Any = None

    def merge(self, output: JSON, event: str) -> None:
        if output.get("continue") is False:
            self.stop = True
            self.stop_reason = output.get("stopReason") or self.stop_reason
        if output.get("decision") == "block":
            self._block(output.get("reason"))
        if isinstance(output.get("systemMessage"), str):
            self.system_messages.append(output["systemMessage"])
        specific = output.get("hookSpecificOutput")
        if isinstance(specific, dict):
            self._merge_specific(specific, event)

    def _block(self, reason: Any) -> None:
        self.blocked = True
        if isinstance(reason, str) and reason:
            self.reason = f"{self.reason}\n{reason}" if self.reason else reason

    def _merge_specific(self, specific: JSON, event: str) -> None:
        request_decision = specific.get("decision")
        if isinstance(request_decision, dict):  # PermissionRequest's answer shape
            specific = {**specific, "permissionDecision": request_decision.get("behavior"),
                        "permissionDecisionReason": request_decision.get("message"),
                        "updatedInput": request_decision.get("updatedInput")}
        decision = specific.get("permissionDecision")
        rank = {"deny": 3, "ask": 2, "allow": 1}
        if decision in rank and rank[decision] > rank.get(self.permission_decision or "", 0):
            self.permission_decision = decision
            reason = specific.get("permissionDecisionReason")
            if isinstance(reason, str):
                self.reason = reason
        if isinstance(specific.get("updatedInput"), dict):
            self.updated_input = specific["updatedInput"]
        context = specific.get("additionalContext")
        if isinstance(context, str) and context:
            self.additional_context.append(context)
        if "updatedToolOutput" in specific:
            self.updated_output = specific["updatedToolOutput"]
