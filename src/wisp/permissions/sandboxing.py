"""How the OS sandbox changes the judgement of a Bash call.

Above: `evaluate`, which applies this to the Bash judge's verdict when the session has a
sandbox. Below: the session's sandbox, seen through `SandboxedCommands` (the permission
layer does not import the sandbox package).

- Deny stays deny: deny rules are judged first, sandbox or not.
- `dangerouslyDisableSandbox: true` (when `allowUnsandboxedCommands` lets it count) runs
  the command outside the sandbox, so it is asked about unless an allow rule or
  bypassPermissions grants it; with nobody to ask (plain `-p`) that means denied.
- `autoAllowBashIfSandboxed`: a call that would be asked about runs without asking when
  it will run inside an enforcing sandbox, unless an ask rule is what asks. An excluded
  command (`excludedCommands`) runs outside, through the normal judgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wisp.permissions.engine import Verdict


class SandboxedCommands(Protocol):
    """What the judge needs to know of the session's sandbox (`CommandSandbox`)."""

    @property
    def auto_allow(self) -> bool: ...
    def override_requested(self, tool_input: Mapping[str, Any]) -> bool: ...
    def runs_sandboxed(self, tool_input: Mapping[str, Any]) -> bool: ...


def sandbox_verdict(sandbox: SandboxedCommands, tool_input: Mapping[str, Any],
                    verdict: Verdict) -> Verdict:
    from wisp.permissions.engine import Verdict

    if verdict.behavior == "deny":
        return verdict
    if sandbox.override_requested(tool_input):
        if verdict.behavior == "allow" and verdict.source in ("rule", "mode"):
            return verdict
        command = str(tool_input.get("command", ""))
        return Verdict("ask", f"Bash wants to run this command outside the sandbox "
                       f"(dangerouslyDisableSandbox): {command}. It needs explicit "
                       "approval.", "sandboxOverride")
    if (verdict.behavior == "ask" and verdict.source != "rule" and sandbox.auto_allow
            and sandbox.runs_sandboxed(tool_input)):
        return Verdict("allow", source="sandbox")
    return verdict
