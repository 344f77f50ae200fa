"""Judges one tool call: deny rules, then protected paths and ask rules, then allow rules,
then the mode, with the working-folder boundary applied to every file a call touches.

Rules protect files, not tools: a call is reduced to the file uses it makes (see
`files.py`), and `Read(...)`/`Edit(...)` path rules judge those uses whichever tool makes
them. Bash is judged from a real shell parse (`bash_judge.py`) and fails closed: what the
analysis cannot resolve is asked about, never allowed.

deny beats ask beats allow; between ask and allow rules, the higher-ranked source decides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from wisp.jsontypes import JSON
from wisp.paths.protected import config_folders
from wisp.permissions.files import (
    FileUse,
    denying_rule,
    granting_rule,
    inside_boundary,
    normalised,
    protected_write,
)
from wisp.permissions.judged import JudgedTool
from wisp.permissions.modes import PermissionMode
from wisp.rules import READ_FAMILY, Rule, name_matches, normalise_path
from wisp.values import Record, Value, field

if TYPE_CHECKING:
    from wisp.permissions.sandboxing import SandboxedCommands

Behavior = Literal["allow", "deny", "ask"]


class Verdict(Value):
    behavior: Behavior
    message: str = ""
    # "rule", "mode", "readonly", "host", "hook", "protected", "boundary", "analysis":
    # who decided, for tool_result_meta and the host's decision_reason_type.
    source: str = "config"
    rule: str | None = None


class PermissionPolicy(Record):
    mode: PermissionMode = "default"
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    extra_dirs: list[Path] = field(default_factory=list)
    # The environment tools run with: `~` and `$VAR` in Bash paths expand against it.
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # The session's OS sandbox, when `sandbox.enabled`: it changes what a Bash call needs
    # (`wisp.permissions.sandboxing`).
    sandbox: SandboxedCommands | None = None
    # The session's plan file (`wisp.tools.exit_plan_mode.plan_file`): in plan mode the one
    # file the model may write.
    plan_file: str | None = None

    def working_dirs(self) -> list[str]:
        return list(_normalised_dirs(self.cwd, tuple(self.extra_dirs)))

    def config_dirs(self) -> list[str]:
        keys = ("HOME", "WISP_CONFIG_DIR", "CLAUDE_CONFIG_DIR")
        return list(_config_dirs(tuple((k, self.env.get(k, "")) for k in keys)))

    def may_read(self, path: str) -> bool:
        """False when a Read deny rule covers `path` (normalised): searches skip it."""
        return denying_rule(self.deny, FileUse("read", path), str(self.cwd)) is None

    def has_read_denials(self) -> bool:
        return any(r.family == READ_FAMILY and r.content is not None for r in self.deny)


# Each judgement needs these; resolving symlinks every time would cost more than the rest.
@lru_cache(maxsize=64)
def _normalised_dirs(cwd: Path, extra: tuple[Path, ...]) -> tuple[str, ...]:
    return tuple(normalise_path(str(d), cwd) for d in (cwd, *extra))


@lru_cache(maxsize=16)
def _config_dirs(env_items: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    return tuple(config_folders({k: v for k, v in env_items if v}))


def evaluate(tool: JudgedTool, tool_input: JSON, policy: PermissionPolicy) -> Verdict:
    if tool.rule_subject == "command":
        from wisp.permissions.bash_judge import judge_bash

        verdict = judge_bash(tool, tool.subject(tool_input), policy)
        if policy.sandbox is None:
            return verdict
        from wisp.permissions.sandboxing import sandbox_verdict

        return sandbox_verdict(policy.sandbox, tool_input, verdict)
    return _judge_tool(tool, tool_input, policy)


def tool_uses(tool: JudgedTool, tool_input: JSON, policy: PermissionPolicy) -> list[FileUse]:
    if tool.kind not in ("read", "edit"):
        return []
    kind: Literal["read", "write"] = "write" if tool.kind == "edit" else "read"
    # Not recursive even for a search: Grep and Glob skip a denied subtree themselves
    # (ToolContext.read_filter), so a deny below the folder must not refuse the search.
    return [normalised(kind, p, str(policy.cwd)) for p in tool.target_paths(tool_input)]


def _judge_tool(tool: JudgedTool, tool_input: JSON, policy: PermissionPolicy) -> Verdict:
    uses = tool_uses(tool, tool_input, policy)
    denied = (_tool_rule(policy.deny, tool, tool_input) or denied_use(uses, policy)
              or _search_denied(tool, uses, policy))
    if denied is not None:
        return deny_by_rule(tool.name, denied)
    if policy.mode == "bypassPermissions" or _writes_only_the_plan(tool, uses, policy):
        return Verdict("allow", source="mode")
    protected = protected_reasons(uses, policy)
    if protected:
        return ask_protected(tool.name, protected)
    ask = _tool_rule(policy.ask, tool, tool_input) or any_path_rule(policy.ask, uses, policy)
    allow = _bounded(_tool_rule(policy.allow, tool, tool_input), tool, uses, policy) or \
        _path_rule(policy.allow, uses, policy)
    if ask is not None and (allow is None or ask.rank >= allow.rank):
        return Verdict("ask", not_granted(tool, tool_input), "rule", str(ask))
    if allow is not None:
        return Verdict("allow", source="rule", rule=str(allow))
    return _unruled(tool, tool_input, uses, policy)


def _unruled(tool: JudgedTool, tool_input: JSON, uses: list[FileUse], policy: PermissionPolicy
             ) -> Verdict:
    """What no rule decided: the user's own question, else the mode."""
    if tool.asks_user:  # no mode grants it, and plan mode does not refuse it
        return Verdict("ask", f"{tool.describe(tool_input)}: only the user can answer this, "
                       "and where nobody can be asked (wisp -p) it is refused.", "mode")
    return _by_mode(tool, tool_input, uses, policy)


def _writes_only_the_plan(tool: JudgedTool, uses: list[FileUse], policy: PermissionPolicy
                          ) -> bool:
    """Plan mode's one writable file: the session's plan (in the config folder, which is
    otherwise protected)."""
    if policy.mode != "plan" or policy.plan_file is None or tool.kind != "edit" or not uses:
        return False
    plan = normalise_path(policy.plan_file, policy.cwd)
    return all(use.kind == "write" and use.path == plan for use in uses)


def _bounded(rule: Rule | None, tool: JudgedTool, uses: list[FileUse], policy: PermissionPolicy
             ) -> Rule | None:
    """A bare allow rule for a file tool (`Read`, `Edit`) grants it inside the working
    folders only: outside them a rule must name the path, or --add-dir add the folder."""
    if rule is None or rule.content is not None or tool.kind not in ("read", "edit"):
        return rule
    working = policy.working_dirs()
    return rule if all(inside_boundary(u, working) for u in uses) else None


def _tool_rule(rules: list[Rule], tool: JudgedTool, tool_input: JSON) -> Rule | None:
    """The highest-ranked rule about the tool itself (bare, or non-path content such as
    `WebFetch(domain:…)` or `Skill(pdf)`); path rules are judged per file use instead."""
    hits = [r for r in rules if r.names_tool(tool.rule_name)
            and _tool_content_matches(r, tool, tool_input)]
    return max(hits, key=lambda r: r.rank, default=None)


def _tool_content_matches(rule: Rule, tool: JudgedTool, tool_input: JSON) -> bool:
    if rule.content is None:
        return True
    if tool.rule_subject == "domain" and rule.content.startswith("domain:"):
        domain = tool.subject(tool_input).lower()
        wanted = rule.content.removeprefix("domain:").strip().lower().rstrip(".")
        return bool(domain) and (domain == wanted or domain.endswith("." + wanted))
    if tool.rule_subject == "name":
        return name_matches(rule.content, tool.subject(tool_input))
    return False


def denied_use(uses: list[FileUse], policy: PermissionPolicy) -> Rule | None:
    for use in uses:
        rule = denying_rule(policy.deny, use, str(policy.cwd))
        if rule is not None:
            return rule
    return None


# A name no rule written for real files names specifically: what a rule does to it, it
# does to every file directly in the folder.
_ANY_FILE = "\x00any-file"


def _search_denied(tool: JudgedTool, uses: list[FileUse], policy: PermissionPolicy) -> Rule | None:
    """A search is refused outright only when a deny rule takes its folder whole (`dir/**`
    covers any file in it); a rule about some files below is left to the tool's filter."""
    if not tool.searches_folders:
        return None
    probes = [FileUse(u.kind, f"{u.path}/{_ANY_FILE}") for u in uses if u.path is not None]
    return denied_use(probes, policy)


def _path_rule(rules: list[Rule], uses: list[FileUse], policy: PermissionPolicy) -> Rule | None:
    """A path rule that covers every use (allow needs all of them)."""
    working = policy.working_dirs()
    found = [granting_rule(rules, use, str(policy.cwd), working) for use in uses]
    if not found or any(r is None for r in found):
        return None
    return min((r for r in found if r is not None), key=lambda r: r.rank)


def any_path_rule(rules: list[Rule], uses: list[FileUse], policy: PermissionPolicy
                  ) -> Rule | None:
    """The highest-ranked path rule that names any of the uses (ask needs only one)."""
    found = [r for use in uses if (r := granting_rule(rules, use, str(policy.cwd)))]
    return max(found, key=lambda r: r.rank, default=None)


def protected_reasons(uses: list[FileUse], policy: PermissionPolicy) -> list[str]:
    config = policy.config_dirs()
    return [why for use in uses if (why := protected_write(use, config))]


def _by_mode(tool: JudgedTool, tool_input: JSON, uses: list[FileUse],
             policy: PermissionPolicy) -> Verdict:
    mode = policy.mode
    working = policy.working_dirs()
    outside = [u.path for u in uses if not inside_boundary(u, working)]
    if tool.is_read_only(tool_input) and not outside:
        return Verdict("allow", source="readonly")
    if mode == "plan" and not tool.is_read_only(tool_input):
        target = ", ".join(tool.target_paths(tool_input)) or tool.describe(tool_input)
        return Verdict("deny", f"Cannot run {tool.name} on {target} while in plan mode: plan "
                       "mode only reads.", "mode")
    if mode in ("acceptEdits", "auto") and tool.kind == "edit" and uses and not outside:
        return Verdict("allow", source="mode")
    if mode == "dontAsk":
        return Verdict("deny", f"Permission to use {tool.name} has been denied: wisp is in "
                       "dontAsk mode, which runs only pre-approved tools.", "mode")
    if outside:
        return ask_outside(tool.name, [p for p in outside if p], policy)
    return Verdict("ask", not_granted(tool, tool_input), "mode")


def deny_by_rule(tool_name: str, rule: Rule) -> Verdict:
    return Verdict("deny", f"Permission to use {tool_name} has been denied by the rule "
                   f"{rule}.", "rule", str(rule))


def ask_protected(tool_name: str, reasons: list[str]) -> Verdict:
    return Verdict("ask", f"{tool_name} needs explicit approval: {'; '.join(reasons)}. "
                   "Writes there can change how agents run, so no mode or allow rule "
                   "grants them.", "protected")


def ask_outside(tool_name: str, paths: list[str], policy: PermissionPolicy) -> Verdict:
    shown = ", ".join(paths[:3]) + (" …" if len(paths) > 3 else "")
    return Verdict("ask", f"{tool_name} wants to access {shown}, outside the working "
                   f"folders ({', '.join(policy.working_dirs())}). Grant it with --add-dir "
                   "or an allow rule such as Read(<path>/**).", "boundary")


def not_granted(tool: JudgedTool, tool_input: JSON) -> str:
    what = ", ".join(tool.target_paths(tool_input)) or tool.describe(tool_input)
    return (f"Permission to use {tool.name} ({what}) has not been granted. Allow it with "
            f"--allowedTools {tool.name}, a settings rule, or --permission-mode.")
