"""The runtime's side of the project context (`wisp.project`): loading it for a session,
and `reload_skills` / `reload_plugins`, which re-read the files and change what the
session's next turn sees (a request already sent is never rewritten).

A plugin's parts live in four places once loaded: its agents in the subagent runner, its
skills behind the Skill tool, its hooks in the hook runner (tagged `plugin:<name>`), its
MCP servers in the hub (named `plugin:<name>:<server>`). A reload replaces each of them
and leaves everything else (settings hooks, `--mcp-config` servers, SDK agents) alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.project.context import open_project, warn_about

__all__ = ["open_project", "reload_answer", "reload_plugins", "reload_skills"]

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

PLUGIN_HOOK_SOURCE = "plugin:"


def reload_skills(runtime: Runtime) -> list[JSON]:
    """Re-reads the skill folders; answers the skills as the SDKs' SlashCommand rows."""
    project = runtime.project
    project.load_skills()
    _offer_skill_tool(runtime)
    return [skill.describe() for skill in project.skills.values()]


async def reload_plugins(runtime: Runtime, add_dirs: list[str] | None = None) -> JSON:
    """Re-reads the plugins (and `add_dirs` as more of them), then everything they feed:
    agents, skills, hooks, MCP servers. Answers what `reload_plugins` reports."""
    project = runtime.project
    project.plugin_dirs += [d for d in add_dirs or [] if d not in project.plugin_dirs]
    before = set(project.plugin_mcp_servers())
    project.warnings = []
    project.load_plugins()
    project.load_agents()
    project.load_skills()
    warn_about(project)
    _replace_plugin_hooks(runtime)
    _replace_file_agents(runtime)
    _offer_skill_tool(runtime)
    await _replace_plugin_servers(runtime, before)
    return reload_answer(runtime)


def reload_answer(runtime: Runtime) -> JSON:
    from wisp.commands.prompts import listing
    from wisp.paths import config_dir

    project = runtime.project
    runner = runtime.ctx.subagents
    agents = runner.listing() if runner is not None else {}
    return {
        "commands": listing(runtime.config.cwd, config_dir(runtime.env), project),
        "agents": [{"name": n, "description": d} for n, d in agents.items()],
        "plugins": project.describe_plugins(),
        "mcpServers": runtime.mcp_status(),
        "error_count": len(project.warnings),
    }


def _replace_plugin_hooks(runtime: Runtime) -> None:
    from wisp.hooks.model import CommandHook
    from wisp.runtime.build import plugin_hook_matchers

    hooks = runtime.ctx.hooks
    if hooks is None:
        return
    hooks.matchers = [m for m in hooks.matchers if not any(
        isinstance(a, CommandHook) and a.source.startswith(PLUGIN_HOOK_SOURCE)
        for a in m.actions)]
    hooks.add(plugin_hook_matchers(runtime.project))


def _replace_file_agents(runtime: Runtime) -> None:
    """Plugin and file agents are re-read; agents from `--agents` or the SDK stay, and
    still win over a file's agent of the same name."""
    from wisp.engine.subagents import parse_agents
    from wisp.tools.task import TaskTool

    runner = runtime.ctx.subagents
    if runner is None:
        return
    runner.redefine_files(parse_agents(runtime.project.agents))
    for tools in (runtime.base_tools, runtime.ctx.config.tools):
        if "Task" in tools:
            tools["Task"] = TaskTool(runner.listing())


def _offer_skill_tool(runtime: Runtime) -> None:
    """Skill is offered while there are skills (and --tools allows it)."""
    from wisp.runtime.build import install_skills

    config = runtime.ctx.config
    config.tools.pop("Skill", None)
    runtime.base_tools.pop("Skill", None)
    install_skills(runtime.ctx, runtime.project)
    if "Skill" in config.tools:
        runtime.base_tools["Skill"] = config.tools["Skill"]


async def _replace_plugin_servers(runtime: Runtime, before: set[str]) -> None:
    wanted = runtime.project.plugin_mcp_servers()
    if not wanted and not before:
        return
    hub = runtime.mcp
    for name in before - set(wanted):
        if hub.get(name) is not None:
            await hub.remove(name)
    hub.add_configured({n: e for n, e in wanted.items() if hub.get(n) is None})
    await runtime.connect_mcp()
    runtime.tools_changed()
