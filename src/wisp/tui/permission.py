"""The permission prompt: the runtime's `AskHost` for the terminal UI.

When the rules leave a call at "ask", the dialog shows a heading ("Bash command", "Edit
file"), the whole command or the edit's numbered diff (cut to the terminal's height when
it must be, its end kept in sight and the choices always on screen; a cut dialog starts
on "No"), a question, and three choices: 1 Yes; 2 Yes
and save an allow rule for this project (`.claude/settings.local.json`; the rule is
shown and can be edited first; deny rules still win over it); 3 No, which also
interrupts the turn so the user can say what to do instead (Esc and ctrl+c mean the
same). One dialog at a time: parallel calls wait their turn, and once a turn is
interrupted its remaining calls are refused without asking.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.padding import Padding
from rich.text import Text

from wisp.jsontypes import JSON
from wisp.permissions.engine import Verdict
from wisp.permissions.modes import PermissionMode
from wisp.rules import Rule
from wisp.textsafe import safe
from wisp.tui.dialog import Picker, call_preview
from wisp.tui.diff_view import relative
from wisp.tui.rules import save_allow_rule, suggest_rules

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime
    from wisp.tools.base import Tool
    from wisp.tui.app import TuiApp

REFUSED = ("The user doesn't want to proceed with this tool use. The tool use was rejected. "
           "Stop and wait for the user to tell you how to proceed.")


# Sentences of the engine's reasons that advise a headless caller (flags to pass): the
# person at the dialog answers it instead.
_ADVICE = ("--allowedTools", "--permission-mode", "--add-dir", "has not been granted")


def permission_picker(tool_name: str, tool_input: JSON, verdict: Verdict, cwd: Path,
                      rules: list[str]) -> Picker:
    """The dialog: Yes; Yes and save `rules` (when there are any); No."""
    title, question = dialog_title(tool_name, tool_input, verdict, cwd)
    choices = ["Yes"]
    if rules:
        choices.append("Yes, and don't ask again for "
                       + ("this rule" if len(rules) == 1 else "these rules")
                       + " in this project")
    choices.append("No, and tell wisp what to do differently (esc)")
    footer = rules_footer(rules) if rules else ""
    return Picker(title, choices, footer=footer, refusal=len(choices) - 1, question=question)


PLAN_TOOL = "ExitPlanMode"
# The plan dialog's yeses, in order, and the mode each leaves plan mode for.
PLAN_CHOICES = ("Yes, and auto-accept edits", "Yes, and approve each edit")
PLAN_EXITS: tuple[PermissionMode, ...] = ("acceptEdits", "default")


def plan_picker(tool_input: JSON) -> Picker:
    """ExitPlanMode's dialog: the plan as Markdown, then how to go on. Cut to the screen,
    it starts on "No" like any dialog not fully seen."""
    from rich.markdown import Markdown

    plan = tool_input.get("plan")
    body = Markdown(safe(plan), hyperlinks=False) if isinstance(plan, str) and plan.strip() \
        else Text("(the plan is in the session's plan file)", style="dim")
    title = Group(Text("Here is the plan:", style="bold yellow"), Padding(body, (0, 0, 0, 2)))
    return Picker(title, [*PLAN_CHOICES, "No, keep planning (esc)"],
                  refusal=len(PLAN_CHOICES), question="Would you like to go ahead?")


def dialog_title(tool_name: str, tool_input: JSON, verdict: Verdict, cwd: Path
                 ) -> tuple[Group, str]:
    """A heading naming the kind of call, why it is asked when that is unusual, the
    command or diff last (`Picker.render` keeps the heading and the end in sight when the
    whole does not fit); and the question the picker shows right above the choices."""
    heading, question = _wording(tool_name, tool_input, cwd)
    why = person_reason(verdict)
    return Group(
        Text(heading, style="bold yellow"),
        *([Text(why, style="yellow")] if why else []),
        Padding(call_preview(tool_name, tool_input, cwd), (0, 0, 0, 2)),
    ), question


def _wording(tool_name: str, tool_input: JSON, cwd: Path) -> tuple[str, str]:
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    shown = safe(relative(path, cwd)) if isinstance(path, str) else ""
    if isinstance(tool_input.get("command"), str):
        return f"{safe(tool_name)} command", "Do you want to run this command?"
    if shown and "old_string" in tool_input:
        return "Edit file", f"Do you want to make this edit to {shown}?"
    if shown and "content" in tool_input:
        target = Path(str(path))
        verb = "overwrite" if (target if target.is_absolute() else cwd / target).exists(
        ) else "create"
        return f"{verb.capitalize()} file", f"Do you want to {verb} {shown}?"
    return safe(tool_name), f"Do you want to allow {safe(tool_name)} to do this?"


def person_reason(verdict: Verdict) -> str:
    """Why this call is asked about, for a person: nothing in the ordinary case (no rule
    or mode allowed it), else the engine's reason without the advice meant for a headless
    caller."""
    if verdict.source == "mode" or not verdict.message:
        return ""
    if verdict.source == "rule" and verdict.rule:
        return safe(f"The rule {verdict.rule} asks before this runs.")
    sentences = re.split(r"(?<=\.) (?=[A-Z])", verdict.message)
    kept = [part for part in sentences if not any(a in part for a in _ADVICE)]
    return safe(" ".join(kept))


def rules_footer(rules: list[str]) -> str:
    return ("rule: " if len(rules) == 1 else "rules: ") + ", ".join(rules) + "  (e to edit)"


class PermissionPrompt:
    def __init__(self, app: TuiApp) -> None:
        self.app = app
        self._one_at_a_time = asyncio.Lock()
        self.rules: list[str] = []  # what "don't ask again" saves (editable with `e`)

    def connect(self, runtime: Runtime) -> None:
        """This dialog answers the runtime's permission questions, and MCP servers' own
        questions (`wisp.tui.elicit_dialog`) take turns with it."""
        from wisp.tui.elicit_dialog import ElicitDialog

        runtime.connect_host(self, None)
        runtime.mcp_elicit = ElicitDialog(self.app, self._one_at_a_time)

    async def __call__(self, tool: Tool, tool_input: JSON, tool_use_id: str,
                       verdict: Verdict) -> tuple[Verdict, JSON]:
        async with self._one_at_a_time:
            runtime = self.app.runtime
            if runtime.session.abort.is_set():
                return Verdict("deny", REFUSED, "host"), tool_input
            await runtime.notify(f"wisp needs your permission to use {tool.name}",
                                 "permission_prompt")
            choice = await self._ask(tool, tool_input, verdict)
        return self._answer(choice, tool_input)

    async def _ask(self, tool: Tool, tool_input: JSON, verdict: Verdict) -> int | None:
        if tool.name == PLAN_TOOL:
            return await self._ask_plan(tool_input)
        cwd = self.app.config.cwd
        self.rules = suggest_rules(tool, tool_input, cwd=cwd, env=self.app.runtime.env) if (
            verdict.source not in ("protected", "analysis")) else []
        picker = permission_picker(tool.name, tool_input, verdict, cwd, self.rules)
        choice = await self.app.show_dialog(picker)
        if choice is not None and choice == len(picker.choices) - 1:
            return None
        return choice

    async def _ask_plan(self, tool_input: JSON) -> int | None:
        """ExitPlanMode: the plan, and how to go on. Both yeses leave plan mode, to the
        mode they name, before the tool runs; No keeps planning (the turn stops so the
        user can say what to change)."""
        self.rules = []
        picker = plan_picker(tool_input)
        choice = await self.app.show_dialog(picker)
        if choice is None or choice == len(picker.choices) - 1:
            return None
        self.app.runtime.set_permission_mode(PLAN_EXITS[choice])
        self.app.invalidate()
        return 0

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
        self.app.runtime.add_rule("allow", Rule.parse(rule, rank=3))
        self.app.view.print_text(f"  Saved {rule} to {path}", "dim")
