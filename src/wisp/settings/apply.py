"""Turns merged settings into engine inputs: permission rules, mode, hooks, env."""

from __future__ import annotations

from typing import Any

from wisp.hooks.model import DEFAULT_TIMEOUT_S, EVENTS, CommandHook, HookMatcher
from wisp.settings.loader import SOURCE_RANK, Settings


def hook_matchers(settings: Settings) -> list[HookMatcher]:
    matchers: list[HookMatcher] = []
    for source in sorted(settings.sources, key=lambda s: -SOURCE_RANK[s.name]):
        matchers += matchers_from(source.doc.get("hooks") or {}, source.name)
    return matchers


def matchers_from(hooks: dict[str, Any], source: str) -> list[HookMatcher]:
    """The matchers of one validated `hooks` object (a settings file's, a plugin's)."""
    matchers: list[HookMatcher] = []
    for event, entries in hooks.items():
        if event not in EVENTS:
            continue  # an event wisp does not run: reported when the file loaded
        for entry in entries:
            actions = tuple(
                CommandHook(h["command"], float(h.get("timeout", DEFAULT_TIMEOUT_S)), source,
                            background=h.get("async") is True)
                for h in entry.get("hooks", []))
            matchers.append(HookMatcher(event, entry.get("matcher"), actions))
    return matchers
