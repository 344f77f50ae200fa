"""Keys of a settings document that neither the reference nor wisp knows, each with the
closest known key at its place. Only reported: the reference accepts unknown keys (its
schema passes them through), so a file with one still loads, but a typo such as
`permissions.alow` would otherwise change nothing, silently.

Above: `wisp.settings.loader`, which warns once per file. Below: the reference's table
(`known_keys`, generated from its schema) and wisp's own keys here.
"""

from __future__ import annotations

from typing import Any

from wisp.settings.known_keys import REFERENCE

# Keys only wisp reads: OpenAI-compatible providers (wisp.models.route) and MCP servers
# straight in settings (the reference reads those from .mcp.json and ~/.claude.json).
WISP_ONLY: dict[str, Any] = {
    "providers": {"*": {
        "type": None, "base_url": None, "api_key_env": None, "headers": None,
        "preset": None, "compat": None,
        "models": {"*": {"context_window": None, "max_output_tokens": None,
                         "input_per_mtok": None, "output_per_mtok": None,
                         "cache_write_per_mtok": None, "cache_read_per_mtok": None}},
    }},
    "mcpServers": None,
}
KNOWN: dict[str, Any] = {**REFERENCE, **WISP_ONLY}


def unknown_keys(doc: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(key path, closest known path or None) for every unknown key, in document order.
    Paths read as `permissions.alow` or `hooks.Stop[0].hooks[1].comand`."""
    found: list[tuple[str, str | None]] = []
    _walk(doc, KNOWN, "", found)
    return found


def _walk(value: Any, spec: Any, path: str, found: list[tuple[str, str | None]]) -> None:
    if spec is None:
        return
    if isinstance(spec, list):
        if isinstance(value, list):
            for index, item in enumerate(value):
                _walk(item, spec[0], f"{path}[{index}]", found)
        return
    if not isinstance(value, dict):
        return  # a wrong type is the validator's to report, not a key to suggest
    for key, inner in value.items():
        where = f"{path}.{key}" if path else str(key)
        if "*" in spec:  # a record: any key, each value by one spec
            _walk(inner, spec["*"], where, found)
        elif key in spec:
            _walk(inner, spec[key], where, found)
        else:
            from wisp.suggest import closest  # only once a key is unknown

            guess = closest(str(key), spec)
            found.append((where, None if guess is None else where[:-len(str(key))] + guess))
