"""The permission prompt: the runtime's `AskHost` for the terminal UI.

When the rules leave a call at "ask", the dialog shows the tool, the whole command or the
edit's diff (cut to the terminal's height when it must be, its end kept in sight and the
choices always on screen; a cut dialog starts on "No"), and three choices: 1 Yes; 2 Yes
and save an allow rule for this project (`.claude/settings.local.json`; the rule is
shown and can be edited first; deny rules still win over it); 3 No, which also
interrupts the turn so the user can say what to do instead (Esc and ctrl+c mean the
same). One dialog at a time: parallel calls wait their turn, and once a turn is
interrupted its remaining calls are refused without asking.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text

from wisp.engine.hook_points import fire
from wisp.permissions.engine import Verdict
from wisp.permissions.rules import Rule
from wisp.tui.dialog import Picker, call_preview
from wisp.tui.rules import save_allow_rule, suggest_rules

if TYPE_CHECKING:
    from wisp.tools.base import Tool
    from wisp.tui.app import TuiApp

JSON = dict[str, Any]
REFUSED = ("The user doesn't want to proceed with this tool use. The tool use was rejected. "
           "Stop and wait for the user to tell you how to proceed.")


def rules_footer(rules: list[str]) -> str:
    return ("rule: " if len(rules) == 1 else "rules: ") + ", ".join(rules) + "  (e to edit)"


class PermissionPrompt:
    def __init__(self, app: TuiApp) -> None:
        self.app = app
        self._one_at_a_time = asyncio.Lock()
        self.rules: list[str] = []  # what "don't ask again" saves (editable with `e`)

    async def __call__(self, tool: Tool, tool_input: JSON, tool_use_id: str,
                       verdict: Verdict) -> tuple[Verdict, JSON]:
        async with self._one_at_a_time:
            runtime = self.app.runtime
            if runtime.session.abort.is_set():
                return Verdict("deny", REFUSED, "host"), tool_input
            await fire(runtime.ctx, "Notification",
                       message=f"wisp needs your permission to use {tool.name}",
                       notification_type="permission_prompt")
            choice = await self._ask(tool, tool_input, verdict)
        return self._answer(choice, tool_input)

    async def _ask(self, tool: Tool, tool_input: JSON, verdict: Verdict) -> int | None:
        cwd = self.app.config.cwd
        self.rules = suggest_rules(tool, tool_input, cwd=cwd, env=self.app.runtime.env) if (
            verdict.source not in ("protected", "analysis")) else []
        grantable = bool(self.rules)
        # The preview last: when it must be cut to fit, its end stays in sight.
        title = Group(
            Text(f"{tool.name} wants to run", style="bold yellow"),
            *([Text(verdict.message, style="dim")] if verdict.message else []),
            call_preview(tool.name, tool_input, cwd),
        )
        choices = ["Yes"]
        if grantable:
            choices.append("Yes, and don't ask again for "
                           + ("this rule" if len(self.rules) == 1 else "these rules")
                           + " in this project")
        choices.append("No, and tell wisp what to do instead (esc)")
        footer = rules_footer(self.rules) if grantable else ""
        picker = Picker(title, choices, footer=footer, refusal=len(choices) - 1)
        choice = await self.app.show_dialog(picker)
        if choice is not None and choice == len(choices) - 1:
            return None
        return choice

    def _answer(self, choice: int | None, tool_input: JSON) -> tuple[Verdict, JSON]:
        if choice is None:
            self.app.runtime.interrupt()  # from inside the turn: ends at the next boundary
            return Verdict("deny", REFUSED, "host"), tool_input
        if choice == 1:
            for rule in self.rules:
                self._save(rule)
        return Verdict("allow", source="host"), tool_input

    def _save(self, rule: str) -> None:
        try:
            path = save_allow_rule(self.app.config.cwd, rule)
        except (OSError, ValueError) as exc:
            self.app.view.print_text(f"⚠ Could not save {rule}: {exc}", "red")
            return
        # Ranked as a local-settings rule, as it will be when the next session loads it.
        self.app.runtime.session.policy.allow.append(Rule.parse(rule, rank=3))
        self.app.view.print_text(f"  Saved {rule} to {path}", "dim")
