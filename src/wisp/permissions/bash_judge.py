"""Judging a Bash command from its shell analysis.

A deny rule matches when any command the line could run matches it, or when any path the
line reads or writes is denied. An allow needs every command covered (by an allow rule, or
by being a known read-only command), every read inside the working folders or granted,
and every write granted. What the analysis could not resolve is asked about (denied where
nobody can be asked), never allowed: a rule cannot be checked against a command it cannot
see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wisp.permissions.engine import (
    PermissionPolicy,
    Verdict,
    any_path_rule,
    ask_protected,
    denied_use,
    deny_by_rule,
    protected_reasons,
)
from wisp.permissions.files import (
    FileUse,
    granting_rule,
    inside_boundary,
    normalised,
)
from wisp.permissions.judged import JudgedTool
from wisp.rules import Rule, command_matches
from wisp.shell import ShellAnalysis, SimpleCommand, analyse

# Tab and newline are ordinary shell whitespace; every other control character (CR, NUL,
# ESC, …) can make what a terminal or log shows differ from what bash runs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class _Grant:
    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def judge_bash(tool: JudgedTool, command: str, policy: PermissionPolicy) -> Verdict:
    rejected = _control_characters(command)
    if rejected is not None:
        return rejected
    analysis = analyse(command, cwd=str(policy.cwd), env=policy.env)
    per_command = [(c, _uses(c, policy)) for c in analysis.commands]
    uses = [u for _, cu in per_command for u, _ in cu]
    denied = (_command_rule(policy.deny, tool.rule_name, analysis.commands)
              or denied_use(uses, policy))
    if denied is not None:
        return deny_by_rule(tool.name, denied)
    settled = _bypass_or_unresolved(analysis, policy, tool.rule_name)
    if settled is not None:
        return settled
    protected = protected_reasons(uses, policy)
    if protected:
        return ask_protected(tool.name, protected)
    return _judge_grants(tool, analysis, per_command, uses, policy)


def _bypass_or_unresolved(analysis: ShellAnalysis, policy: PermissionPolicy, tool_name: str
                          ) -> Verdict | None:
    """Bypass allows everything but what a deny rule might catch in a command the analysis
    could not see through; outside bypass, an unresolved command is always asked about.
    Inline code (`python -c`, awk `system()`) is unresolved only while deny rules exist:
    it is code like any program's, but a deny rule cannot be checked inside it."""
    rules_apply = _rules_could_apply(policy, tool_name)
    if analysis.unresolved and (policy.mode != "bypassPermissions" or rules_apply):
        return _ask_unresolved(analysis)
    hidden = [c.text for c in analysis.commands if c.hidden_code]
    if hidden and rules_apply:
        return Verdict("ask", f"wisp could not fully analyse this command: it runs inline code "
                       f"no rule can see into ({_shorten(hidden[0])}), and deny rules are in "
                       "force, so it needs approval.", "analysis")
    if policy.mode == "bypassPermissions":
        return Verdict("allow", source="mode")
    return None


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _control_characters(command: str) -> Verdict | None:
    bad = _CONTROL.search(command)
    if bad is None:
        return None
    return Verdict("deny", f"Bash command rejected: it contains the control character "
                   f"U+{ord(bad.group()):04X} at offset {bad.start()}. Only tab and newline "
                   "may appear in a command.", "analysis")


# Each use, and whether it comes from a redirection rather than the program itself.
_Uses = list[tuple[FileUse, bool]]


def _judge_grants(tool: JudgedTool, analysis: ShellAnalysis,
                  per_command: list[tuple[SimpleCommand, _Uses]], uses: list[FileUse],
                  policy: PermissionPolicy) -> Verdict:
    ask = (_command_rule(policy.ask, tool.rule_name, analysis.commands)
           or any_path_rule(policy.ask, uses, policy))
    grant = _Grant()
    for command, command_uses in per_command:
        _grant_command(tool.rule_name, command, command_uses, policy, grant)
    allow = min(grant.rules, key=lambda r: r.rank, default=None)
    if ask is not None and (allow is None or ask.rank >= allow.rank):
        return Verdict("ask", f"Bash needs approval: the rule {ask} asks for it.", "rule",
                       str(ask))
    if not grant.problems:
        return Verdict("allow", source="rule" if allow else "readonly",
                       rule=str(allow) if allow else None)
    return _by_mode(analysis, grant.problems, policy)


def _grant_command(tool_name: str, command: SimpleCommand, uses: _Uses,
                   policy: PermissionPolicy, grant: _Grant) -> None:
    rule = _best(policy.allow, tool_name, command)
    if rule is not None:
        grant.rules.append(rule)
    elif not command.read_only:
        grant.problems.append(f"`{command.rule_text}` is not allowed by any rule")
    for use, redirected in uses:
        # A rule for a program grants what the program does, not a redirection around it
        # (`Bash(echo:*)` and `echo x > f`); the bare `Bash` rule grants everything.
        granted = rule is not None and (rule.content is None or not redirected)
        problem = _use_problem(use, policy, tool_name, command_granted=granted)
        if problem:
            grant.problems.append(problem)


def _use_problem(use: FileUse, policy: PermissionPolicy, tool_name: str, *,
                 command_granted: bool) -> str | None:
    if use.path is None:
        if use.kind == "mention" and not _rules_could_apply(policy, tool_name):
            return None
        return f"it {_verb(use)} a path that cannot be known before it runs"
    working = policy.working_dirs()
    if granting_rule(policy.allow, use, str(policy.cwd), working) is not None:
        return None
    inside = inside_boundary(use, working)
    if use.kind != "write":
        return None if inside else f"it {_verb(use)} {use.path}, outside the working folders"
    # A command granted by a rule may change files inside the working folders (that is
    # what granting `Bash(mv:*)` means); acceptEdits grants the same to any command.
    if inside and (command_granted or policy.mode in ("acceptEdits", "auto")):
        return None
    where = "" if inside else ", outside the working folders"
    return f"it writes {use.path}{where}, which no rule grants"


def _verb(use: FileUse) -> str:
    return {"read": "reads", "write": "writes", "mention": "names"}[use.kind]


def _by_mode(analysis: ShellAnalysis, problems: list[str], policy: PermissionPolicy) -> Verdict:
    why = "; ".join(dict.fromkeys(problems))
    if policy.mode == "plan" and not analysis.read_only:
        return Verdict("deny", f"Cannot run this command while in plan mode: plan mode only "
                       f"reads ({why}).", "mode")
    if policy.mode == "dontAsk":
        return Verdict("deny", f"Permission to use Bash has been denied: wisp is in dontAsk "
                       f"mode, which runs only pre-approved commands ({why}).", "mode")
    return Verdict("ask", f"Permission to use Bash has not been granted: {why}. Allow it "
                   "with --allowedTools 'Bash(<command>:*)', a settings rule, --add-dir or "
                   "--permission-mode.", "mode")


def _ask_unresolved(analysis: ShellAnalysis) -> Verdict:
    reasons = "; ".join(dict.fromkeys(analysis.unresolved))
    return Verdict("ask", f"wisp could not fully analyse this command ({reasons}), so no "
                   "rule or mode can allow it without asking.", "analysis")


def _uses(command: SimpleCommand, policy: PermissionPolicy) -> _Uses:
    cwd = str(policy.cwd)
    redirected = frozenset(command.redirected)
    return [(normalised(u.kind, u.path, cwd, u.recursive), u in redirected)
            for u in command.uses]


def _best(rules: list[Rule], tool_name: str, command: SimpleCommand) -> Rule | None:
    hits = [r for r in rules if r.names_tool(tool_name) and (
        r.content is None or command_matches(r.content, command.rule_text))]
    return max(hits, key=lambda r: r.rank, default=None)


def _command_rule(rules: list[Rule], tool_name: str, commands: tuple[SimpleCommand, ...]
                  ) -> Rule | None:
    """The highest-ranked deny or ask rule matching any command the line could run,
    including what an unknown program might run from its arguments."""
    hits = [r for c in commands for text in c.candidate_texts() for r in rules
            if r.names_tool(tool_name)
            and (r.content is None or command_matches(r.content, text))]
    return max(hits, key=lambda r: r.rank, default=None)


def _rules_could_apply(policy: PermissionPolicy, tool_name: str) -> bool:
    """Whether a deny rule exists that an unresolved command might fall under."""
    return any(r.family is not None or r.names_tool(tool_name) for r in policy.deny)
