"""Finds, parses, validates and merges settings sources.

Precedence: flag (--settings) > local > project > user. Scalars take the value of the
highest source that sets them. Permission rules keep the rank of their source: deny from
any source wins, and between allow and ask the higher-ranked source decides (so a local
allow overrides a project ask, while a user deny still beats a project allow). Hooks from
every source run. A file that does not parse or validate is skipped with a warning that
names it; it is never silently ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp.diagnostics import warn
from wisp.jsontypes import JSON
from wisp.settings.schema import restricting_part, unknown_hook_events, validate_settings

SOURCE_RANK = {"user": 1, "project": 2, "local": 3, "flag": 4}
ALL_SOURCES = ("user", "project", "local")


# Plain classes rather than dataclasses: these are defined on every start, before the
# first frame, and defining a dataclass costs ~1 ms against ~0.02 ms for a plain class.


class LoadedSource:
    """A settings file (or --settings value) that parsed and validated."""

    __slots__ = ("doc", "name", "path")

    def __init__(self, name: str, path: str | None, doc: JSON) -> None:
        self.name = name
        self.path = path
        self.doc = doc

    def __repr__(self) -> str:
        return f"LoadedSource(name={self.name!r}, path={self.path!r}, doc={self.doc!r})"


class Settings:
    """Every loaded source, a record of each one that was skipped, and the unknown keys
    of those loaded (`unknown`: where, key path, closest known path)."""

    __slots__ = ("errors", "held_back", "sources", "unknown")

    def __init__(self, sources: list[LoadedSource] | None = None,
                 errors: list[JSON] | None = None) -> None:
        self.sources: list[LoadedSource] = [] if sources is None else sources
        self.errors: list[JSON] = [] if errors is None else errors
        self.unknown: list[tuple[str, str, str | None]] = []
        # (file, what it asked for) that an untrusted folder did not get: see
        # `wisp.settings.untrusted`.
        self.held_back: list[tuple[str, list[str]]] = []

    def __repr__(self) -> str:
        return f"Settings(sources={self.sources!r}, errors={self.errors!r})"

    def scalar(self, key: str) -> Any:
        for source in sorted(self.sources, key=lambda s: -SOURCE_RANK[s.name]):
            if key in source.doc:
                return source.doc[key]
        return None

    def permission_scalar(self, key: str) -> Any:
        for source in sorted(self.sources, key=lambda s: -SOURCE_RANK[s.name]):
            perms = source.doc.get("permissions") or {}
            if key in perms:
                return perms[key]
        return None

    def rules(self, kind: str) -> list[tuple[str, int]]:
        """(rule text, source rank) for `allow`, `deny` or `ask`, from every source."""
        return [(text, SOURCE_RANK[s.name]) for s in self.sources
                for text in (s.doc.get("permissions") or {}).get(kind, [])]

    def merged_env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for source in sorted(self.sources, key=lambda s: SOURCE_RANK[s.name]):
            env.update(source.doc.get("env") or {})
        return env

    def mcp_servers(self) -> dict[str, JSON]:
        """`mcpServers` of every source, a higher-precedence source's entry replacing a
        lower one's of the same name."""
        servers: dict[str, JSON] = {}
        for source in sorted(self.sources, key=lambda s: SOURCE_RANK[s.name]):
            servers.update(source.doc.get("mcpServers") or {})
        return servers

    def describe(self) -> list[JSON]:
        return [{"source": s.name, "path": s.path} for s in self.sources]


def user_settings_path(env: Mapping[str, str]) -> Path:
    """`<config dir>/settings.json`, the config dir being the one transcripts use too
    (`wisp.paths.config_dir`)."""
    from wisp.paths import config_dir

    return config_dir(env) / "settings.json"


def source_paths(cwd: Path, env: Mapping[str, str]) -> dict[str, Path]:
    return {
        "user": user_settings_path(env),
        "project": cwd / ".claude" / "settings.json",
        "local": cwd / ".claude" / "settings.local.json",
    }


def _parse(name: str, path: str | None, text: str, settings: Settings) -> None:
    where = path or "--settings"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        settings.errors.append({"source": name, "path": where,
                                "error": f"invalid JSON: {exc.msg} at line {exc.lineno}"})
        return
    problems = validate_settings(doc)
    if problems:
        _skip(LoadedSource(name, path, doc), where, problems, settings)
        return
    settings.sources.append(LoadedSource(name, path, doc))
    if doc:
        from wisp.settings.unknown_keys import unknown_keys

        settings.unknown += [(where, key, guess) for key, guess in unknown_keys(doc)]
        settings.unknown += unknown_hook_events(doc, where)


def _skip(source: LoadedSource, where: str, problems: list[str], settings: Settings) -> None:
    """Records a file that failed validation. What it restricts still holds: its deny
    and ask rules load on their own, and a sandbox it switches on stays on."""
    doc: Any = source.doc
    error: JSON = {"source": source.name, "path": where, "error": "; ".join(problems)}
    sandbox = doc.get("sandbox") if isinstance(doc, dict) else None
    if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
        # The sandbox stays on, with none of the file's other sandbox values
        # (`wisp.sandbox.config`).
        error["sandbox_enabled"] = True
    restricting = restricting_part(doc)
    if restricting is not None:
        error["kept"] = "its deny and ask rules still apply"
        settings.sources.append(LoadedSource(source.name, source.path, restricting))
    settings.errors.append(error)


def _flag_text(raw: str) -> tuple[str | None, str]:
    if raw.lstrip().startswith("{"):
        return None, raw
    path = Path(raw).expanduser()
    return str(path), path.read_text(encoding="utf-8")


def load_settings(cwd: Path, env: Mapping[str, str], *, selected: tuple[str, ...] | None,
                  flag: str | None) -> Settings:
    settings = Settings()
    for name, path in source_paths(cwd, env).items():
        if selected is not None and name not in selected:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            settings.errors.append({"source": name, "path": str(path), "error": exc.strerror})
            continue
        _parse(name, str(path), text, settings)
    if flag:
        try:
            path_text, text = _flag_text(flag)
        except OSError as exc:
            settings.errors.append({"source": "flag", "path": flag, "error": exc.strerror})
        else:
            _parse("flag", path_text, text, settings)
    from wisp.settings.untrusted import guard

    guard(settings, cwd, env)  # an untrusted folder's files may restrict, never grant
    return settings


# (file, key path) already reported by this process: sessions that load the same settings
# again (wisp serve, a new session in the UI) do not repeat them.
_REPORTED: set[tuple[str, str]] = set()


def warn_about(settings: Settings) -> None:
    for error in settings.errors:
        kept = f" ({error['kept']})" if error.get("kept") else ""
        warn(f"wisp: warning: skipping settings file {error['path']}: {error['error']}{kept}\n")
    for where, key, guess in settings.unknown:
        if (where, key) in _REPORTED:
            continue
        _REPORTED.add((where, key))
        hint = f" (did you mean {guess}?)" if guess else ""
        warn(f"wisp: warning: {where}: unknown key {key}{hint}\n")
