"""A host's `updatedPermissions` (its answer to a permission prompt) applied to a
session's policy: the rules, the mode, the working folders. Only this session changes
(other destinations are not persisted here). `Runtime.apply_permission_updates` is the
way front ends reach it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wisp.permissions.engine import PermissionPolicy
from wisp.permissions.modes import BYPASS, is_permission_mode
from wisp.rules import Rule


def apply_permission_updates(policy: PermissionPolicy, updates: Any, *,
                             may_bypass: bool = False) -> None:
    """Applies `updatedPermissions` to this session (other destinations are not persisted).
    `may_bypass`: whether a `setMode` may enter bypassPermissions (see `bypass_refusal`)."""
    if not isinstance(updates, list):
        return
    for update in updates:
        if not isinstance(update, dict):
            continue
        kind = update.get("type")
        rules = [
            Rule(str(r.get("toolName")), r.get("ruleContent"), rank=6)
            for r in update.get("rules") or []
            if isinstance(r, dict)
        ]
        target = {"allow": policy.allow, "deny": policy.deny, "ask": policy.ask}.get(
            str(update.get("behavior", "allow")), policy.allow
        )
        if kind == "addRules":
            target.extend(rules)
        elif kind == "replaceRules":
            target[:] = rules
        elif kind == "removeRules":
            target[:] = [r for r in target if r not in rules]
        elif kind == "setMode":
            _set_mode(policy, update.get("mode"), may_bypass)
        elif kind == "addDirectories":
            policy.extra_dirs.extend(Path(d) for d in update.get("directories") or [])
        elif kind == "removeDirectories":
            gone = {str(Path(d)) for d in update.get("directories") or []}
            policy.extra_dirs[:] = [d for d in policy.extra_dirs if str(d) not in gone]


def _set_mode(policy: PermissionPolicy, mode: Any, may_bypass: bool) -> None:
    # Like set_permission_mode: a known mode only, and bypass only when the launch allowed
    # it. A permission answer has no error channel, so a refused mode is just not applied.
    if is_permission_mode(mode) and (mode != BYPASS or may_bypass):
        policy.mode = mode
