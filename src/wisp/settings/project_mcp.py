"""A project's `.mcp.json`: the MCP servers a repository declares for whoever works in it,
`{"mcpServers": {name: config}}` in the project folder (the cwd, or the repository root
above it), read only when the user trusts that folder (`wisp.settings.trust`): a cloned
repository must not start programs on this machine before then.

Settings narrow it as Claude Code's do: `enabledMcpjsonServers` (only these names),
`disabledMcpjsonServers` (never these). `enableAllProjectMcpServers` changes nothing
here: there is no approval prompt to skip in a trusted folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.diagnostics import warn
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.settings.loader import Settings

FILE_NAME = ".mcp.json"


def project_mcp_servers(cwd: Path, env: Mapping[str, str], settings: Settings) -> dict[str, JSON]:
    path = _find(cwd)
    if path is None:
        return {}
    from wisp.settings.trust import is_trusted

    if not is_trusted(cwd, env):
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warn(f"wisp: warning: {path} is not read: {exc}\n")
        return {}
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    if not isinstance(servers, dict):
        warn(f"wisp: warning: {path} has no mcpServers object; it is not read\n")
        return {}
    enabled = settings.scalar("enabledMcpjsonServers")
    disabled = settings.scalar("disabledMcpjsonServers")
    return {str(name): entry for name, entry in servers.items() if isinstance(entry, dict)
            and (not isinstance(enabled, list) or name in enabled)
            and not (isinstance(disabled, list) and name in disabled)}


def _find(cwd: Path) -> Path | None:
    """`.mcp.json` in the cwd, else in a folder above it up to the repository's root."""
    from wisp.settings.trust import project_root

    root = project_root(cwd)
    for folder in (cwd, *cwd.parents):
        candidate = folder / FILE_NAME
        if candidate.is_file():
            return candidate
        if folder == root:
            break
    return None
