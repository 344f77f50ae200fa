"""Judges one tool call: deny rules, then ask rules, then allow rules, then the mode.

deny beats ask beats allow. Bash commands are split into their parts (`&&`, `;`, `|`,
`$(…)`, backticks, `bash -c '…'`): a deny rule matching any part denies the whole call,
and an allow rule must cover every part to allow it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wisp.permissions.rules import (
    EDIT_TOOLS,
    Rule,
    command_matches,
    normalise_path,
    path_matches,
    rule_path_pattern,
)
from wisp.tools.base import Tool

JSON = dict[str, Any]
Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Verdict:
    behavior: Behavior
    message: str = ""
    # "rule", "mode", "readonly", "host", "hook": who decided, for tool_result_meta.
    source: str = "config"
    rule: str | None = None


@dataclass
class PermissionPolicy:
    mode: str = "default"
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    extra_dirs: list[Path] = field(default_factory=list)

    def working_dirs(self) -> list[str]:
        return [normalise_path(str(d), self.cwd) for d in [self.cwd, *self.extra_dirs]]


def command_parts(command: str) -> list[str]:
    from wisp.permissions.shell import expand_command

    return expand_command(command)


def rule_matches(rule: Rule, tool: Tool, tool_input: JSON, policy: PermissionPolicy, *,
                 every_part: bool) -> bool:
    if not rule.names_tool(tool.name):
        return False
    if rule.content is None:
        return True
    if tool.name == "Bash":
        parts = command_parts(str(tool_input.get("command", "")))
        hits = [command_matches(rule.content, part) for part in parts]
        return bool(hits) and (all(hits) if every_part else any(hits))
    if tool.name == "WebFetch" and rule.content.startswith("domain:"):
        domain_of = getattr(tool, "domain", None)
        domain = domain_of(tool_input) if callable(domain_of) else ""
        wanted = rule.content.removeprefix("domain:")
        return bool(domain) and (domain == wanted or domain.endswith("." + wanted))
    paths = [normalise_path(p, policy.cwd) for p in tool.target_paths(tool_input)]
    pattern = rule_path_pattern(rule.content, policy.cwd)
    hits = [path_matches(pattern, p) for p in paths]
    return bool(hits) and (all(hits) if every_part else any(hits))


def _inside_working_dirs(tool: Tool, tool_input: JSON, policy: PermissionPolicy) -> bool:
    paths = [normalise_path(p, policy.cwd) for p in tool.target_paths(tool_input)]
    dirs = policy.working_dirs()
    return bool(paths) and all(any(path_matches(d + "/", p) for d in dirs) for p in paths)


def evaluate(tool: Tool, tool_input: JSON, policy: PermissionPolicy) -> Verdict:
    for rule in policy.deny:
        if rule_matches(rule, tool, tool_input, policy, every_part=False):
            return Verdict("deny", f"Permission to use {tool.name} has been denied by the "
                           f"rule {rule}.", "rule", str(rule))
    if policy.mode == "bypassPermissions":
        return Verdict("allow", source="mode")
    ask = _best(policy.ask, tool, tool_input, policy, every_part=False)
    allow = _best(policy.allow, tool, tool_input, policy, every_part=True)
    # Within one source ask beats allow; across sources the higher-ranked source decides.
    if ask is not None and (allow is None or ask.rank >= allow.rank):
        return Verdict("ask", _not_granted(tool, tool_input), "rule", str(ask))
    if allow is not None:
        return Verdict("allow", source="rule", rule=str(allow))
    return _by_mode(tool, tool_input, policy)


def _best(rules: list[Rule], tool: Tool, tool_input: JSON, policy: PermissionPolicy, *,
          every_part: bool) -> Rule | None:
    hits = [r for r in rules if rule_matches(r, tool, tool_input, policy, every_part=every_part)]
    return max(hits, key=lambda r: r.rank, default=None)


def _by_mode(tool: Tool, tool_input: JSON, policy: PermissionPolicy) -> Verdict:
    mode = policy.mode
    read_only = tool.is_read_only(tool_input)
    if read_only:
        # Reads need no grant, inside the working directories or not (as in the
        # reference's headless mode); a deny rule above still stops them.
        return Verdict("allow", source="readonly")
    if mode == "plan":
        target = ", ".join(tool.target_paths(tool_input)) or tool.describe(tool_input)
        return Verdict("deny", f"Cannot run {tool.name} on {target} while in plan mode: plan "
                       "mode only reads.", "mode")
    if mode in ("acceptEdits", "auto") and tool.name in EDIT_TOOLS and _inside_working_dirs(
        tool, tool_input, policy
    ):
        return Verdict("allow", source="mode")
    if mode == "dontAsk":
        return Verdict("deny", f"Permission to use {tool.name} has been denied: wisp is in "
                       "dontAsk mode, which runs only pre-approved tools.", "mode")
    return Verdict("ask", _not_granted(tool, tool_input), "mode")


def _not_granted(tool: Tool, tool_input: JSON) -> str:
    what = ", ".join(tool.target_paths(tool_input)) or tool.describe(tool_input)
    return (f"Permission to use {tool.name} ({what}) has not been granted. Allow it with "
            f"--allowedTools {tool.name}, a settings rule, or --permission-mode.")
