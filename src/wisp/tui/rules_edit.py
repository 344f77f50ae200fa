"""`/permissions allow|deny|ask <rule>` and `/permissions remove <rule>`: edit the
project's local settings (`.claude/settings.local.json`) and this session's rules."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from wisp.rules import Rule
from wisp.tui.rules import validate_rule

if TYPE_CHECKING:
    from wisp.runtime.session_verbs import RuleKind
    from wisp.tui.app import TuiApp

BEHAVIOURS = ("allow", "deny", "ask")
USAGE = "Usage: /permissions allow|deny|ask <rule>, or /permissions remove <rule>"


def apply(app: TuiApp, args: str) -> str:
    verb, _, rule = args.partition(" ")
    rule = rule.strip()
    if verb not in (*BEHAVIOURS, "remove") or not rule:
        return USAGE
    problem = validate_rule(rule)
    if problem:
        return problem
    path = app.config.cwd / ".claude" / "settings.local.json"
    parsed = Rule.parse(rule, rank=3)
    try:
        doc = _read(path)
        permissions = doc.setdefault("permissions", {})
        if verb == "remove":
            for behaviour in BEHAVIOURS:
                entries = permissions.get(behaviour) or []
                permissions[behaviour] = [r for r in entries if r != rule]
            app.runtime.remove_rule(parsed)
            _write(path, doc)
            return f"Removed {rule} from {path}"
        entries = permissions.setdefault(verb, [])
        if rule not in entries:
            entries.append(rule)
        _write(path, doc)
    except (OSError, ValueError) as exc:
        return f"Could not change {path}: {exc}"
    app.runtime.add_rule(cast("RuleKind", verb), parsed)  # one of BEHAVIOURS: checked above
    return f"Added {verb} rule {rule} to {path}"


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    doc = json.loads(text)  # ValueError: reported, the file left as it is
    if not isinstance(doc, dict):
        raise ValueError("it does not hold a JSON object")
    return doc


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
