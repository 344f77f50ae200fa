"""Turns merged settings into engine inputs: permission rules, mode, hooks, env."""

from __future__ import annotations

from wisp.hooks.model import DEFAULT_TIMEOUT_S, CommandHook, HookMatcher
from wisp.settings.loader import SOURCE_RANK, Settings


def hook_matchers(settings: Settings) -> list[HookMatcher]:
    matchers: list[HookMatcher] = []
    for source in sorted(settings.sources, key=lambda s: -SOURCE_RANK[s.name]):
        for event, entries in (source.doc.get("hooks") or {}).items():
            for entry in entries:
                actions = tuple(
                    CommandHook(h["command"], float(h.get("timeout", DEFAULT_TIMEOUT_S)),
                                source.name)
                    for h in entry.get("hooks", []))
                matchers.append(HookMatcher(event, entry.get("matcher"), actions))
    return matchers
