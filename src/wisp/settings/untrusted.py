"""What an untrusted project folder's settings may still do: restrict, never grant.

Above: the settings loader, which hands every loaded source here. Below: the trust record
(`wisp.settings.trust`). A repository can ship `.claude/settings.json` and
`.claude/settings.local.json` (git does not stop a committed "local" file), so until the
user trusts the folder both are cut down to what cannot widen what wisp does:

- kept: `permissions.deny` and `permissions.ask` (restrictions always apply), a
  `defaultMode` that only narrows (`default`, `plan`, `dontAsk`),
  `disableBypassPermissionsMode`, the parts of `sandbox` that switch it on or tighten it
  (`enabled: true`, `allowUnsandboxedCommands: false`, deny lists), and a few keys that
  change no behaviour a repository could abuse (model, output style and the like);
- held back: everything else, and so any key added later, by construction. That covers
  allow rules, widening modes (`acceptEdits`, `auto`, `bypassPermissions`), extra
  directories, hooks, MCP servers, `env` (an `ANTHROPIC_BASE_URL` that would receive the
  user's API key, a `PATH` or `BASH_ENV` that turns an allowed `ls` into the
  repository's code), `apiKeyHelper`, providers, the status line and other commands,
  plugins.

The reference ignores only `.claude/settings.json` allow rules in print mode; this holds
back more, in every mode. What was held back is said on stderr in one line, with how to
trust the folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.settings.loader import LoadedSource, Settings

PROJECT_SOURCES = ("project", "local")
# Settings keys that give a repository no way to run code, reach the network, read
# more files or skip a question.
HARMLESS_KEYS = frozenset({
    "$schema", "model", "outputStyle", "includeCoAuthoredBy", "cleanupPeriodDays",
    "spinnerTipsEnabled", "alwaysThinkingEnabled", "disableAllHooks", "language",
})
RESTRICTING_PERMISSIONS = ("deny", "ask", "disableBypassPermissionsMode")
NARROWING_MODES = frozenset({"default", "plan", "dontAsk"})
# `sandbox` values that only confine more: (section, key, the value that tightens, or
# None for a deny list, which tightens whatever it holds). "" is the top of `sandbox`.
TIGHTENING_SANDBOX = (("", "enabled", True), ("", "allowUnsandboxedCommands", False),
                      ("", "failIfUnavailable", True), ("filesystem", "denyRead", None),
                      ("filesystem", "denyWrite", None), ("network", "deniedDomains", None))
SHOWN_NAMES = 8  # names listed per key in the note; the rest are counted

__all__ = ["PROJECT_SOURCES", "guard", "held_back_note"]


def guard(settings: Settings, cwd: Path, env: Mapping[str, str]) -> None:
    """Cuts the project folder's sources down unless the folder is trusted, recording
    in `settings.held_back` what was left out (one entry per file)."""
    sources = [s for s in settings.sources if s.name in PROJECT_SOURCES]
    if not sources:
        return
    from wisp.settings.trust import is_trusted

    if is_trusted(cwd, env):
        return
    for source in sources:
        held = _restrict(source)
        if held:
            settings.held_back.append((source.path or source.name, held))


def _restrict(source: LoadedSource) -> list[str]:
    """Replaces the source's document with its restricting part; answers what went."""
    doc = source.doc
    kept: JSON = {key: value for key, value in doc.items() if key in HARMLESS_KEYS}
    held = [_describe(key, value) for key, value in doc.items()
            if key not in HARMLESS_KEYS and key not in ("permissions", "sandbox")]
    sandbox = doc.get("sandbox")
    if isinstance(sandbox, dict):
        tightened, dropped = _restrict_sandbox(sandbox)
        if tightened:
            kept["sandbox"] = tightened
        held = dropped + held
    permissions = doc.get("permissions")
    if isinstance(permissions, dict):
        narrowed, dropped = _restrict_permissions(permissions)
        if narrowed:
            kept["permissions"] = narrowed
        held = dropped + held
    source.doc = kept
    return held


def _restrict_permissions(permissions: JSON) -> tuple[JSON, list[str]]:
    kept = {k: v for k, v in permissions.items() if k in RESTRICTING_PERMISSIONS}
    held = []
    for key, value in permissions.items():
        if key in RESTRICTING_PERMISSIONS:
            continue
        if key == "defaultMode" and value in NARROWING_MODES:
            kept[key] = value
        elif key == "defaultMode":
            held.append(f"permissions.defaultMode {value}")
        else:
            held.append(_describe(f"permissions.{key}", value))
    return kept, held


def _restrict_sandbox(sandbox: JSON) -> tuple[JSON, list[str]]:
    """(the tightening part of `sandbox`, what was left out by dotted name)."""
    kept: JSON = {}
    for section, key, tight in TIGHTENING_SANDBOX:
        source = sandbox.get(section) if section else sandbox
        if not isinstance(source, dict) or key not in source:
            continue
        if tight is None or source[key] is tight:
            target = kept.setdefault(section, {}) if section else kept
            target[key] = source[key]
    held = [f"sandbox.{name}" for name in _dotted(sandbox) if name not in _dotted(kept)]
    return kept, held


def _dotted(doc: JSON) -> list[str]:
    """`filesystem.denyRead`, `enabled`: the leaf keys of a two-level document."""
    names = []
    for key, value in doc.items():
        if isinstance(value, dict) and key in ("filesystem", "network"):
            names += [f"{key}.{inner}" for inner in value]
        else:
            names.append(key)
    return names


def _describe(key: str, value: Any) -> str:
    """`env (BASH_ENV, PATH)`, `permissions.allow (2 rules)`, `apiKeyHelper`."""
    if isinstance(value, dict) and value:
        names = sorted(map(str, value))
        shown = ", ".join(names[:SHOWN_NAMES])
        more = f", +{len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
        return f"{key} ({shown}{more})"
    if isinstance(value, list) and value:
        return f"{key} ({len(value)} rule{'s' if len(value) != 1 else ''})"
    return key


def held_back_note(settings: Settings, cwd: Path, env: Mapping[str, str]) -> str | None:
    """The one line that says what an untrusted folder's settings did not get to do,
    and how to trust the folder; None when nothing was held back."""
    if not settings.held_back:
        return None
    from wisp.settings.trust import TRUST_ENV, config_file, project_root
    from wisp.textsafe import safe_line

    parts = "; ".join(f"{_short(path, cwd)}: {', '.join(held)}"
                      for path, held in settings.held_back)
    root = project_root(cwd)
    return safe_line(
        f"wisp: warning: this folder is not trusted, so its settings' grants were held back "
        f"({parts}). To trust it, run wisp here and answer Yes to the trust dialog, set "
        f"{TRUST_ENV}=1, or set projects[\"{root}\"].hasTrustDialogAccepted: true in "
        f"{config_file(env)}") + "\n"


def _short(path: str, cwd: Path) -> str:
    prefix = str(cwd).rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path
