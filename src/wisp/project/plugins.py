"""Plugins: a folder that bundles commands, agents, skills, hooks and MCP servers, in the
layout Claude Code plugins use, loaded with `--plugin-dir <dir>` (repeatable) or the SDKs'
`plugins=[{"type": "local", "path": ...}]`.

    my-plugin/
      .claude-plugin/plugin.json   {"name", "version", "description", and optionally
                                    "commands", "agents", "skills" (folders), "hooks"
                                    (a file or an object), "mcpServers" (a file or an object)}
      commands/*.md   agents/*.md   skills/<name>/SKILL.md
      hooks/hooks.json              {"hooks": {<event>: [matchers as in settings]}}
      .mcp.json                     {"mcpServers": {...}}

Everything a plugin adds is namespaced by its name: the command `/my-plugin:deploy`, the
agent `my-plugin:reviewer`, the skill `my-plugin:pdf`, the MCP server
`plugin:my-plugin:db`. `${CLAUDE_PLUGIN_ROOT}` in hook commands and server entries is the
plugin's folder, so a plugin can name its own scripts wherever it is installed.

A plugin that cannot be loaded (no folder, a manifest that is not JSON, a bad name, a hooks
or servers file that does not parse) is skipped with a warning naming it and the reason;
the session goes on without it. Only the manifest, hooks and server files are read here:
commands, agents and skills are found by their own loaders from the folders named here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wisp.jsontypes import JSON

MANIFEST = Path(".claude-plugin") / "plugin.json"
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"


class PluginError(Exception):
    """Why a plugin was skipped."""


class Plugin:
    """One loaded plugin: where its parts are, and its hooks and servers ready to merge."""

    __slots__ = ("agents_dirs", "commands_dirs", "description", "hooks", "mcp_servers",
                 "name", "path", "skills_dirs", "version")

    def __init__(self, name: str, path: Path, manifest: JSON) -> None:
        self.name = name
        self.path = path
        self.version = manifest.get("version") if isinstance(manifest.get("version"),
                                                             str) else None
        self.description = str(manifest.get("description") or "")
        self.commands_dirs = _folders(path, manifest.get("commands"), "commands")
        self.agents_dirs = _folders(path, manifest.get("agents"), "agents")
        self.skills_dirs = _folders(path, manifest.get("skills"), "skills")
        self.hooks: JSON = {}
        self.mcp_servers: dict[str, JSON] = {}

    def describe(self) -> JSON:
        """`system/init`'s and `reload_plugins`' entry for this plugin."""
        entry: JSON = {"name": self.name, "path": str(self.path),
                       "source": f"{self.name}@local"}
        if self.version:
            entry["version"] = self.version
        return entry

    def __repr__(self) -> str:
        return f"Plugin(name={self.name!r}, path={str(self.path)!r})"


def load_plugins(dirs: Sequence[str], *, with_mcp: bool = True
                 ) -> tuple[list[Plugin], list[str]]:
    """The plugins in `dirs` that load, and one warning per plugin that does not. A second
    plugin with a name already taken is refused: its parts would shadow the first's."""
    plugins: list[Plugin] = []
    warnings: list[str] = []
    for raw in dirs:
        try:
            plugin = load_plugin(Path(raw).expanduser(), with_mcp=with_mcp)
        except PluginError as exc:
            warnings.append(f"plugin {raw}: {exc}; skipped")
            continue
        if any(p.name == plugin.name for p in plugins):
            warnings.append(f"plugin {raw}: the name {plugin.name!r} is already loaded; "
                            "skipped")
            continue
        plugins.append(plugin)
    return plugins, warnings


def load_plugin(path: Path, *, with_mcp: bool = True) -> Plugin:
    if not path.is_dir():
        raise PluginError("no such folder")
    path = path.resolve()
    manifest = _manifest(path)
    name = manifest.get("name", path.name)
    if not isinstance(name, str) or re.fullmatch(_NAME, name) is None:
        raise PluginError(f"{name!r} is not a valid plugin name")
    plugin = Plugin(name, path, manifest)
    plugin.hooks = _hooks(path, manifest.get("hooks"))
    if with_mcp:
        plugin.mcp_servers = {f"plugin:{name}:{server}": entry for server, entry in
                              _servers(path, manifest.get("mcpServers")).items()}
    return plugin


def _manifest(root: Path) -> JSON:
    """The manifest, or `{}` when the plugin has none (its folder name is its name)."""
    file = root / MANIFEST
    if not file.exists():
        return {}
    data = _read_json(file, "manifest")
    if not isinstance(data, dict):
        raise PluginError(f"{file} is not a JSON object")
    return data


def _read_json(file: Path, what: str) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PluginError(f"cannot read its {what} {file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PluginError(f"its {what} {file} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise PluginError(f"its {what} {file} is not valid JSON: {exc.msg} at line "
                          f"{exc.lineno}") from None


def _folders(root: Path, declared: Any, default: str) -> tuple[Path, ...]:
    """The manifest's folder(s) for a part (relative to the plugin), else the default."""
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        return tuple(_inside(root, str(item)) for item in declared if isinstance(item, str))
    return (root / default,)


def _inside(root: Path, relative: str) -> Path:
    """A path the manifest names, kept inside the plugin: `../x` must not reach out."""
    target = (root / relative).resolve()
    if target != root and root not in target.parents:
        raise PluginError(f"{relative!r} points outside the plugin")
    return target


def _hooks(root: Path, declared: Any) -> JSON:
    """`{event: [matchers]}` with `${CLAUDE_PLUGIN_ROOT}` filled in."""
    if isinstance(declared, dict):
        data: Any = declared
    else:
        file = _inside(root, declared) if isinstance(declared, str) else (
            root / "hooks" / "hooks.json")
        if not isinstance(declared, str) and not file.exists():
            return {}
        data = _read_json(file, "hooks file")
    hooks = data.get("hooks", data) if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        raise PluginError("its hooks are not an object of events")
    from wisp.settings.schema import validate_settings

    problems = validate_settings({"hooks": hooks})
    if problems:
        raise PluginError("its hooks are invalid: " + "; ".join(problems))
    return dict(_with_root(hooks, root))


def _servers(root: Path, declared: Any) -> dict[str, JSON]:
    if isinstance(declared, dict):
        data: Any = declared
    else:
        file = _inside(root, declared) if isinstance(declared, str) else root / ".mcp.json"
        if not isinstance(declared, str) and not file.exists():
            return {}
        data = _read_json(file, "MCP servers file")
    servers = data.get("mcpServers", data) if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not all(isinstance(v, dict)
                                                for v in servers.values()):
        raise PluginError("its MCP servers are not an object of server entries")
    return {str(k): dict(_with_root(v, root)) for k, v in servers.items()}


def _with_root(value: Any, root: Path) -> Any:
    """`value` with every `${CLAUDE_PLUGIN_ROOT}` in its strings replaced by `root`."""
    if isinstance(value, str):
        return value.replace(ROOT_VARIABLE, str(root))
    if isinstance(value, list):
        return [_with_root(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _with_root(v, root) for k, v in value.items()}
    return value
