"""Validation of one settings document. Returns a list of problems; empty means valid.

Hand-written rather than jsonschema so that loading settings on the `-p` hot path does not
pay jsonschema's import cost.
"""

from __future__ import annotations

from typing import Any

MODES = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_permissions(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return ["permissions must be an object"]
    problems = [f"permissions.{key} must be a list of strings"
                for key in ("allow", "deny", "ask", "additionalDirectories")
                if key in value and not _string_list(value[key])]
    mode = value.get("defaultMode")
    if mode is not None and mode not in MODES:
        problems.append(f"permissions.defaultMode must be one of {', '.join(MODES)}")
    return problems


def _check_hook_entry(event: str, index: int, entry: Any) -> list[str]:
    where = f"hooks.{event}[{index}]"
    if not isinstance(entry, dict):
        return [f"{where} must be an object"]
    problems = []
    if "matcher" in entry and not isinstance(entry["matcher"], str):
        problems.append(f"{where}.matcher must be a string")
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        return [*problems, f"{where}.hooks must be a list"]
    for j, hook in enumerate(hooks):
        if not isinstance(hook, dict) or hook.get("type") != "command":
            problems.append(f"{where}.hooks[{j}] must be {{\"type\": \"command\", ...}}")
        elif not isinstance(hook.get("command"), str):
            problems.append(f"{where}.hooks[{j}].command must be a string")
        elif "timeout" in hook and not isinstance(hook["timeout"], (int, float)):
            problems.append(f"{where}.hooks[{j}].timeout must be a number of seconds")
    return problems


def _check_hooks(value: Any) -> list[str]:
    # Only settings with hooks need the hook model (and its classes) before the first frame.
    from wisp.hooks.model import EVENTS

    if not isinstance(value, dict):
        return ["hooks must be an object"]
    problems: list[str] = []
    for event, entries in value.items():
        if event not in EVENTS:
            # An event wisp does not run (a newer reference's, or a typo) is reported as
            # an unknown key and left out (`unknown_hook_events`); the file still loads, so
            # its deny rules are not lost over a hook wisp would never fire.
            continue
        if not isinstance(entries, list):
            problems.append(f"hooks.{event} must be a list")
        else:
            for i, entry in enumerate(entries):
                problems.extend(_check_hook_entry(event, i, entry))
    return problems


def unknown_hook_events(doc: Any, where: str) -> list[tuple[str, str, str | None]]:
    """(where, `hooks.<event>`, closest event) for each `hooks` key of a valid document
    that names no event wisp runs, in the shape of the loader's unknown keys."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict) or not hooks:
        return []
    from wisp.hooks.model import EVENTS
    from wisp.suggest import closest

    found: list[tuple[str, str, str | None]] = []
    for event in hooks:
        if event not in EVENTS:
            guess = closest(str(event), EVENTS)
            found.append((where, f"hooks.{event}", None if guess is None else f"hooks.{guess}"))
    return found


def restricting_part(doc: Any) -> dict[str, Any] | None:
    """What of an invalid document still applies: its deny and ask rules, where they are
    lists of strings. A file skipped for a mistake elsewhere must not switch off the
    protections it asks for (it may restrict, never grant)."""
    permissions = doc.get("permissions") if isinstance(doc, dict) else None
    if not isinstance(permissions, dict):
        return None
    kept = {key: permissions[key] for key in ("deny", "ask")
            if key in permissions and _string_list(permissions[key]) and permissions[key]}
    return {"permissions": kept} if kept else None


def validate_settings(doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return ["the top level must be a JSON object"]
    problems: list[str] = []
    if "permissions" in doc:
        problems.extend(_check_permissions(doc["permissions"]))
    if "hooks" in doc:
        problems.extend(_check_hooks(doc["hooks"]))
    if "env" in doc and not (isinstance(doc["env"], dict)
                             and all(isinstance(v, str) for v in doc["env"].values())):
        problems.append("env must be an object of strings")
    if "model" in doc and not isinstance(doc["model"], str):
        problems.append("model must be a string")
    if "outputStyle" in doc and not isinstance(doc["outputStyle"], str):
        problems.append("outputStyle must be a string")
    servers = doc.get("mcpServers")
    if "mcpServers" in doc and not (isinstance(servers, dict)
                                    and all(isinstance(v, dict) for v in servers.values())):
        problems.append("mcpServers must be an object of server entries")
    if "sandbox" in doc:
        # Loaded only when a file has a sandbox section: most runs never pay for it.
        from wisp.settings.sandbox_schema import check_sandbox

        problems.extend(check_sandbox(doc["sandbox"]))
    return problems
