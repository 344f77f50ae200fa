"""`ProjectContext`: everything a session reads from the project's and the user's files,
loaded once per session (and again by `reload_plugins` / `reload_skills`).

Which files count follows the settings sources the session loads (`--setting-sources`,
the SDKs' `setting_sources`): `user` is the config folder (`~/.claude`), `project` the
checked-in files under the working folder, `local` the private ones (`CLAUDE.local.md`).
Plugins (`--plugin-dir`) load whatever the sources, as the user named them explicitly.

Cheap when there is nothing to find: a few `stat`/`listdir` calls that fail. It runs on
every start, before the first frame (`system/init` lists agents, skills and plugins).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from wisp.diagnostics import warn
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.project.memory import MemoryFile
    from wisp.project.plugins import Plugin
    from wisp.project.skills import Skill
    from wisp.project.styles import OutputStyle
    from wisp.settings.loader import Settings

ALL_SOURCES = ("user", "project", "local")


class ProjectContext:
    """Memory files, file agents, skills, output styles and plugins of one session."""

    __slots__ = ("agents", "config_dir", "cwd", "env", "granted_reads", "home", "memory",
                 "memory_outside", "plugin_dirs", "plugin_dirs_no_mcp", "plugins", "skills",
                 "sources", "style", "style_wanted", "style_warning", "styles", "warnings")

    def __init__(self, cwd: Path, config_dir: Path, sources: Collection[str],
                 plugin_dirs: Sequence[str], plugin_dirs_no_mcp: Sequence[str] = ()) -> None:
        self.cwd = cwd
        self.config_dir = config_dir
        self.sources = tuple(sources)
        self.home: Path | None = None  # the session's HOME, for `@~/…` imports
        # The environment whose user config says whether memory may import from outside
        # the project (`wisp.settings.trust`); None: it may not.
        self.env: Mapping[str, str] | None = None
        self.plugin_dirs = list(plugin_dirs)
        self.plugin_dirs_no_mcp = list(plugin_dirs_no_mcp)
        self.memory: list[MemoryFile] = []
        self.memory_outside: list[Path] = []  # files outside the project, left out
        self.agents: dict[str, JSON] = {}
        self.skills: dict[str, Skill] = {}
        self.styles: dict[str, OutputStyle] = {}
        self.style: OutputStyle | None = None
        self.style_warning: str | None = None
        self.style_wanted: str | None = None  # the settings' choice, known or not
        self.plugins: list[Plugin] = []
        self.warnings: list[str] = []
        # Read rules the runtime added for the skills' folders (replaced on reload).
        self.granted_reads: list[Any] = []

    # What the files contribute -------------------------------------------------------

    def user_dir(self) -> Path | None:
        return self.config_dir if "user" in self.sources else None

    def project_dir(self) -> Path | None:
        return self.cwd / ".claude" if "project" in self.sources else None

    def roots(self, part: str) -> list[tuple[str, Path, str | None]]:
        """(source, folder, namespace) of `part` ("agents", "skills", "commands",
        "output-styles"): user, then project, then each plugin's, so later ones win."""
        roots: list[tuple[str, Path, str | None]] = []
        if (user := self.user_dir()) is not None:
            roots.append(("user", user / part, None))
        if (project := self.project_dir()) is not None:
            roots.append(("project", project / part, None))
        for plugin in self.plugins:
            folders = {"agents": plugin.agents_dirs, "skills": plugin.skills_dirs,
                       "commands": plugin.commands_dirs}.get(part, ())
            roots += [("plugin", folder, plugin.name) for folder in folders]
        return roots

    def plugin_hooks(self) -> list[tuple[str, JSON]]:
        """(plugin name, its `hooks` object) for each plugin with hooks."""
        return [(p.name, p.hooks) for p in self.plugins if p.hooks]

    def plugin_mcp_servers(self) -> dict[str, JSON]:
        return {name: entry for p in self.plugins for name, entry in p.mcp_servers.items()}

    def skill_names(self) -> list[str]:
        return list(self.skills)

    def style_name(self) -> str:
        """The style in force; a name the settings chose that matches no style is still
        reported as chosen (the reference does, and SDK programs compare it), though the
        default style's instructions apply."""
        if self.style is not None and not (self.style.is_default and self.style_wanted):
            return self.style.name
        return self.style_wanted or "default"

    def describe_plugins(self) -> list[JSON]:
        return [p.describe() for p in self.plugins]

    def describe_memory(self) -> list[JSON]:
        return [m.describe() for m in self.memory]

    def init_fields(self, explicit_agents: Collection[str] = ()) -> JSON:
        """`system/init`'s project fields: the agents from files then the host's ones,
        the skills, the plugins and the output style."""
        return {"agents": list(dict.fromkeys([*self.agents, *explicit_agents])),
                "skills": self.skill_names(), "plugins": self.describe_plugins(),
                "output_style": self.style_name()}

    def memory_frame_fields(self) -> JSON | None:
        """The `memory_recall` frame's fields when memory files were loaded."""
        if not self.memory:
            return None
        return {"mode": "startup", "memories": self.describe_memory()}

    def available_styles(self) -> list[str]:
        if not self.styles:
            self.styles = self._read_styles()
        return [style.name for style in self.styles.values()] or ["default"]

    # Loading -------------------------------------------------------------------------

    def load(self, settings: Settings | None) -> ProjectContext:
        """Reads everything (again): plugins first, since they add agents and skills."""
        self.warnings = []
        self.load_plugins()
        self.load_memory()
        self.load_agents()
        self.load_skills()
        self.load_styles(settings)
        return self

    def load_plugins(self) -> None:
        if not self.plugin_dirs and not self.plugin_dirs_no_mcp:
            self.plugins = []
            return
        from wisp.project.plugins import load_plugins

        self.plugins, warnings = load_plugins(self.plugin_dirs)
        quiet, more = load_plugins(self.plugin_dirs_no_mcp, with_mcp=False)
        taken = {p.name for p in self.plugins}
        for plugin in quiet:
            if plugin.name in taken:
                more.append(f"plugin {plugin.path}: the name {plugin.name!r} is already "
                            "loaded; skipped")
            else:
                self.plugins.append(plugin)
        self.warnings += warnings + more

    def load_memory(self) -> None:
        """Project files that bring in files from outside the project do so only once the
        user approved it for this project (the approval is read only when there are
        such files); otherwise they are left out, with a warning naming them."""
        from wisp.project.memory import read_memory

        loaded = read_memory(self.cwd, self.config_dir, self.sources, self.home)
        if loaded.outside and self.env is not None:
            from wisp.settings.trust import imports_decision

            if imports_decision(self.cwd, self.env)[0]:
                loaded = read_memory(self.cwd, self.config_dir, self.sources, self.home,
                                     allow_outside=True)
        self.memory, self.memory_outside = loaded.files, loaded.outside
        if self.memory_outside:
            self.warnings.append(self._outside_note())

    def _outside_note(self) -> str:
        from wisp.paths import config_file
        from wisp.settings.trust import IMPORTS_APPROVED, project_root

        names = ", ".join(map(str, self.memory_outside))
        where = config_file(self.env) if self.env is not None else "the user's .claude.json"
        return (f"left out {len(self.memory_outside)} memory file(s) outside the project, "
                f"imported by its CLAUDE.md files: {names} (to allow them, answer Yes when "
                f"wisp's terminal UI asks, or set projects[\"{project_root(self.cwd)}\"]."
                f"{IMPORTS_APPROVED}: true in {where})")

    # Each loader is imported only when one of its folders exists: most projects have
    # none of them, and this runs before the first frame.

    def load_agents(self) -> None:
        roots = self.existing_roots("agents")
        if not roots:
            self.agents = {}
            return
        from wisp.project.agents import load_agent_files

        self.agents = load_agent_files(roots)

    def load_skills(self) -> None:
        roots = self.existing_roots("skills")
        if not roots:
            self.skills = {}
            return
        from wisp.project.skills import load_skills

        self.skills = load_skills(roots)

    def load_styles(self, settings: Settings | None) -> None:
        """The styles are read only when settings choose one: the default style needs
        none of them (`available_styles` reads them when asked)."""
        wanted = settings.scalar("outputStyle") if settings is not None else None
        self.styles, self.style, self.style_warning = {}, None, None
        self.style_wanted = None
        if not isinstance(wanted, str) or wanted.lower() == "default":
            return
        self.style_wanted = wanted
        from wisp.project.styles import resolve_style

        self.styles = self._read_styles()
        self.style, self.style_warning = resolve_style(wanted, self.styles)
        if self.style_warning:
            self.warnings.append(self.style_warning)

    def _read_styles(self) -> dict[str, OutputStyle]:
        from wisp.project.styles import load_styles

        return load_styles(self.roots("output-styles"))

    def existing_roots(self, part: str) -> list[tuple[str, Path, str | None]]:
        return [root for root in self.roots(part) if os.path.isdir(root[1])]


class ProjectFlags(Protocol):
    """What loading reads from a `RuntimeConfig` (argv's `Options` carries one)."""

    @property
    def cwd(self) -> Path: ...
    @property
    def setting_sources(self) -> tuple[str, ...] | None: ...
    @property
    def plugin_dirs(self) -> tuple[str, ...]: ...
    @property
    def plugin_dirs_no_mcp(self) -> tuple[str, ...]: ...


def open_project(flags: ProjectFlags, env: Mapping[str, str], settings: Settings | None
                 ) -> ProjectContext:
    """The session's project context, its warnings written to stderr once."""
    project = load_project_context(
        flags.cwd, env, setting_sources=flags.setting_sources,
        plugin_dirs=flags.plugin_dirs, plugin_dirs_no_mcp=flags.plugin_dirs_no_mcp,
        settings=settings)
    warn_about(project)
    return project


def warn_about(project: ProjectContext) -> None:
    from wisp.textsafe import safe_line

    for text in project.warnings:  # names of files and plugins: shown, never obeyed
        warn(f"wisp: warning: {safe_line(text)}\n")


def load_project_context(cwd: Path, env: Mapping[str, str], *,
                         setting_sources: Sequence[str] | None,
                         plugin_dirs: Sequence[str] = (),
                         plugin_dirs_no_mcp: Sequence[str] = (),
                         settings: Settings | None = None) -> ProjectContext:
    """The session's project context; `setting_sources` None means all of them."""
    from wisp.paths import config_dir

    sources = ALL_SOURCES if setting_sources is None else tuple(setting_sources)
    context = ProjectContext(cwd, config_dir(env), sources, plugin_dirs, plugin_dirs_no_mcp)
    context.home = Path(env["HOME"]) if env.get("HOME") else None
    context.env = env
    return context.load(settings)
