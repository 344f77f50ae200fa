"""Slash commands of the terminal UI. A command runs in the UI; only a custom command
(a Markdown file in `.claude/commands/` or the user's `commands/`) sends a prompt, its
body with `$ARGUMENTS` filled in. An unknown command says so and sends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp import paths
from wisp.commands.custom import CustomCommand, expand, parse_slash
from wisp.tui.everyday import COMMANDS
from wisp.tui.listings import LISTINGS

if TYPE_CHECKING:
    from rich.table import Table

    from wisp.project.context import ProjectContext
    from wisp.tui.app import TuiApp

Handler = Callable[["TuiApp", str], Awaitable[None]]


class CommandSet:
    def __init__(self, app: TuiApp) -> None:
        self.app = app
        self.custom: dict[str, CustomCommand] = {}
        self.skills: dict[str, str] = {}
        self.reload()

    def reload(self) -> None:
        """The custom commands, the plugins' and the skills (once the runtime, which
        loaded the project's files, is there)."""
        from wisp.commands.prompts import commands_of

        project = self._project()
        self.custom = commands_of(self.app.config.cwd, paths.config_dir(self.app.env), project)
        self.skills = {name: skill.description
                       for name, skill in (project.skills if project else {}).items()}

    def _project(self) -> ProjectContext | None:
        runtime = getattr(self.app, "runtime", None)  # None until the engine has loaded
        return runtime.project if runtime is not None else None

    def descriptions(self) -> dict[str, str]:
        names = {name: doc for name, (doc, _) in BUILT_IN.items()}
        for name, command in self.custom.items():
            names.setdefault(name, f"{command.description} ({command.source})")
        for name, description in self.skills.items():
            names.setdefault(name, f"{description} (skill)")
        return names

    def handles(self, text: str) -> bool:
        return parse_slash(text) is not None

    async def run(self, text: str) -> None:
        parsed = parse_slash(text)
        assert parsed is not None
        name, args = parsed
        app = self.app
        if name in BUILT_IN:
            try:
                await BUILT_IN[name][1](app, args.strip())
            except Exception as exc:  # a command's failure must not end the session
                app.view.print_text(f"/{name} failed: {exc}", "red")
        elif name in self.custom:
            app.send(expand(self.custom[name], args.strip()))
        elif name in self.skills:
            app.send(text.strip())  # the runtime expands `/skill args` into its body
        else:
            app.view.print_text(f"Unknown command: /{name} (try /help)", "yellow")


def new_table(*columns: str) -> Table:
    from rich.table import Table

    table = Table(box=None, show_header=bool(columns[0]), pad_edge=False, padding=(0, 2, 0, 0))
    for column in columns:
        table.add_column(column)
    return table


def add_row(table: Table, *cells: str) -> None:
    """Cells as plain text: a rule like `Bash(ls [x]:*)` or "[name]" is not rich markup.
    Made safe before the table is laid out, so a cell holding a control character keeps
    the columns straight (the renderer would make it safe anyway)."""
    from rich.text import Text

    from wisp.textsafe import safe_line

    table.add_row(*(Text(safe_line(cell)) for cell in cells))


def show_table(app: TuiApp, *items: Any) -> None:
    from wisp.tui import render

    app.print(render.Renderer(app.width(), app.env).ansi(*items))


async def cmd_help(app: TuiApp, args: str) -> None:
    from rich.text import Text

    table = new_table("command", "")
    for name, description in sorted(app.commands.descriptions().items()):
        add_row(table, f"/{name}", description)

    keys = Text(
        "\nenter send · \\+enter or alt+enter newline · ↑↓ history · ctrl+r search history"
        "\n!cmd run a shell command · @path attach a file · shift+tab permission mode"
        "\nesc or ctrl+c interrupt · esc esc clear the input, or rewind · ctrl+o expand"
        "\n? shortcuts · ctrl+g edit in $EDITOR · ctrl+t background tasks"
        "\nctrl+d or ctrl+c twice exit",
        style="dim")
    show_table(app, table, keys)


async def cmd_tasks(app: TuiApp, args: str) -> None:
    from wisp.tui import tasks_panel

    await tasks_panel.show(app)


async def cmd_rewind(app: TuiApp, args: str) -> None:
    from wisp.tui.rewind import rewind

    if app.busy:
        app.view.print_text("Wait for the turn to end (or esc) before /rewind.", "yellow")
        return
    await rewind(app)


async def cmd_clear(app: TuiApp, args: str) -> None:
    await app.new_conversation()
    app.clear_screen()
    app.view.print_text("(new conversation: earlier turns are not sent to the model)")


async def cmd_compact(app: TuiApp, args: str) -> None:
    if app.busy:
        app.view.print_text("Wait for the turn to end (or esc) before /compact.", "yellow")
        return
    app.view.print_text("✻ Compacting the conversation…")
    if not await app.runtime.compact(args or None):
        app.view.print_text("Nothing was compacted.", "yellow")


async def cmd_model(app: TuiApp, args: str) -> None:
    from wisp.tui.model_picker import choose_model  # rich loads after the first frame

    await choose_model(app, args)


async def cmd_resume(app: TuiApp, args: str) -> None:
    from wisp.tui.resume_command import resume

    await resume(app, args)


async def cmd_cost(app: TuiApp, args: str) -> None:
    usage = app.runtime.session.usage
    totals = usage.totals()
    lines = [f"Total cost:  ${usage.cost_usd:.4f}",
             f"Tokens:      {totals['input_tokens']:,} in · {totals['output_tokens']:,} out · "
             f"{totals['cache_read_input_tokens']:,} cache read · "
             f"{totals['cache_creation_input_tokens']:,} cache write"]
    for model, tally in usage.by_model.items():
        lines.append(f"  {model}: ${tally.cost_usd:.4f}")
    app.view.print_text("\n".join(lines))


async def cmd_context(app: TuiApp, args: str) -> None:
    usage = app.runtime.context_usage()
    table = new_table("", "tokens", "")
    for row in usage["categories"]:
        share = 100 * row["tokens"] / max(1, usage["maxTokens"])
        add_row(table, row["name"], f"{row['tokens']:,}", f"{share:.1f}%")
    from rich.text import Text

    title = Text(f"Context: {usage['totalTokens']:,} of {usage['maxTokens']:,} tokens "
                 f"({usage['percentage']}%, estimated) · {usage['model']}", style="bold")
    show_table(app, title, table)


async def cmd_permissions(app: TuiApp, args: str) -> None:
    """`/permissions` lists the rules; `/permissions allow|deny|ask <rule>` adds one to the
    project's local settings; `/permissions remove <rule>` takes it out of them."""
    from wisp.tui import rules_edit

    if args:
        app.view.print_text(rules_edit.apply(app, args))
        return
    policy = app.runtime.session.policy
    table = new_table("behaviour", "rule")
    for behaviour, listed in (("deny", policy.deny), ("ask", policy.ask),
                              ("allow", policy.allow)):
        for rule in listed:
            add_row(table, behaviour, str(rule))
    from rich.text import Text

    hint = Text("/permissions allow|deny|ask <rule> adds a rule to .claude/settings.local.json;"
                " /permissions remove <rule> takes one out", style="dim")
    show_table(app, Text(f"Permission mode: {policy.mode}", style="bold"), table, hint)


async def cmd_memory(app: TuiApp, args: str) -> None:
    """The memory files (CLAUDE.md and what they import) this session loaded; with none,
    where it looked, so a misplaced file is easy to spot. `/memory edit [project | local
    | user]` opens that file in $VISUAL/$EDITOR (the project's by default)."""
    from wisp.project.memory import KIND_LABELS, memory_locations

    verb, _, which = args.strip().partition(" ")
    if verb == "edit":
        from wisp.tui.memory_edit import edit_memory

        await edit_memory(app, which.strip() or "project")
        return
    project = app.runtime.project
    if not project.memory:
        looked = memory_locations(project.cwd, project.config_dir, project.sources)
        lines = ["No memory files are loaded. wisp looks for:",
                 *(f"  {path}  ({KIND_LABELS[kind]})" for kind, path in looked)]
        if not looked:
            lines.append("  nothing: this session loads no settings sources")
        app.view.print_text("\n".join(lines))
        return
    table = new_table("file", "kind", "size", "imported from")
    for memory in project.memory:
        row = memory.describe()
        importer = memory.imported_from
        add_row(table, short_path(memory.path, project.cwd),
             KIND_LABELS.get(memory.kind, memory.kind), f"{row['chars']:,} chars",
             short_path(importer, project.cwd) if importer else "-")
    from rich.text import Text

    title = Text(f"{len(project.memory)} memory file(s), sent to the model with each "
                 "request", style="bold")
    show_table(app, title, table)


def short_path(path: Path, cwd: Path) -> str:
    """A path as the user would type it: relative to the project, or under `~`, so the
    file name survives a narrow terminal."""
    home = Path.home()
    for base, prefix in ((cwd, ""), (home, "~/")):
        if path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return str(path)


async def cmd_reload_skills(app: TuiApp, args: str) -> None:
    from wisp.runtime.project import reload_skills

    rows = reload_skills(app.runtime)
    _after_reload(app)
    names = ", ".join(row["name"] for row in rows) or "none"
    app.view.print_text(f"Skills reloaded: {names}")


async def cmd_reload_plugins(app: TuiApp, args: str) -> None:
    from wisp.runtime.project import reload_plugins

    answer = await reload_plugins(app.runtime)
    _after_reload(app)
    names = ", ".join(p["name"] for p in answer["plugins"]) or "none"
    problems = app.runtime.project.warnings
    text = f"Plugins reloaded: {names}"
    if problems:
        text += "\n" + "\n".join(f"  skipped: {problem}" for problem in problems)
    app.view.print_text(text, "yellow" if problems else "")


def _after_reload(app: TuiApp) -> None:
    app.commands.reload()
    app.completer.commands = app.commands.descriptions()


async def cmd_status(app: TuiApp, args: str) -> None:
    from wisp import __version__

    session, runtime = app.runtime.session, app.runtime
    sources = ", ".join(f"{s['source']} ({s['path']})" for s in runtime.settings.describe())
    lines = [f"wisp {__version__}", f"Session:  {session.session_id}",
             f"Folder:   {app.config.cwd}", f"Model:    {session.model}",
             f"Mode:     {session.permission_mode}",
             f"API:      {runtime.env.get('ANTHROPIC_BASE_URL') or 'https://api.anthropic.com'}",
             f"Settings: {sources or 'none'}",
             f"Sandbox:  {_sandbox_line(runtime.sandbox_status())}",
             f"Transcript: {session.transcript_path or '(not kept)'}"]
    app.view.print_text("\n".join(lines))


def _sandbox_line(status: dict[str, Any] | None) -> str:
    if status is None:
        return "off (commands run unconfined; turn it on with sandbox.enabled)"
    if status["mechanism"] == "none":
        return f"on, but cannot run here: commands are refused ({status.get('reason')})"
    extra = "" if status["mechanism"] == "bubblewrap" else f" ({status.get('reason')})"
    return f"on: {status['mechanism']}, network {status['network']}{extra}"


async def cmd_config(app: TuiApp, args: str) -> None:
    """/config: the settings in effect, file by file. /config set <key> <value> and
    /config unset <key> edit the user's settings file (`wisp.tui.settings_edit`)."""
    verb, _, rest = args.strip().partition(" ")
    if verb in ("set", "unset"):
        from wisp.tui.settings_edit import edit_config

        edit_config(app, verb, rest.strip())
        return
    sources = app.runtime.settings.sources
    if not sources:
        app.view.print_text("No settings files are in effect.")
    for source in sources:
        app.view.print_text(f"{source.name}: {source.path or '--settings'}", "bold")
        app.view.print_text(json.dumps(source.doc, indent=2, ensure_ascii=False))


async def cmd_init(app: TuiApp, args: str) -> None:
    """Asks the model to study the repository and write `CLAUDE.md` (or improve the one
    there), starting from what wisp can tell from the files (`wisp.tui.init_file`)."""
    from wisp.tui.init_file import init_prompt

    app.send(init_prompt(app.config.cwd))


async def cmd_exit(app: TuiApp, args: str) -> None:
    app.exit(0)


BUILT_IN: dict[str, tuple[str, Handler]] = {
    "help": ("commands and keys", cmd_help),
    "clear": ("start a new conversation", cmd_clear),
    "compact": ("summarise the conversation so far [instructions]", cmd_compact),
    "model": ("switch the model [name]", cmd_model),
    "cost": ("tokens and cost of this session", cmd_cost),
    "context": ("how full the context window is", cmd_context),
    "resume": ("resume another session of this project", cmd_resume),
    "permissions": ("view and edit permission rules", cmd_permissions),
    "memory": ("the CLAUDE.md memory files loaded; edit [project|local|user] opens one",
               cmd_memory),
    "reload-skills": ("read the skill folders again", cmd_reload_skills),
    "reload-plugins": ("read the plugins again (--plugin-dir)", cmd_reload_plugins),
    "status": ("version, session, model and settings", cmd_status),
    "config": ("the settings in effect; set <key> <value>, unset <key> edit yours",
               cmd_config),
    "init": ("ask the model to study the project and write CLAUDE.md", cmd_init),
    "tasks": ("background tasks: status, output, stop (ctrl+t)", cmd_tasks),
    "rewind": ("restore the code and/or conversation to before an earlier prompt",
               cmd_rewind),
    "exit": ("leave wisp", cmd_exit),
    "quit": ("leave wisp", cmd_exit),
    **COMMANDS,
    **LISTINGS,
}
