"""Slash commands in prompts, for print mode, the duplex session and the SDKs.

A prompt that starts with `/` names a command:

- a built-in (`/compact [instructions]`, `/clear` and its aliases `/reset`, `/new`) runs in
  the runtime instead of reaching the model, and its turn ends with a result of its own;
- a custom command (`wisp.commands.custom`: `.claude/commands/*.md`, `<config dir>/commands/
  *.md`) becomes its expanded body, sent as the reference sends it: a block naming the
  command, then the body with `$ARGUMENTS` filled in;
- anything else (`/tmp/x is empty`, an unknown `/name`) is an ordinary prompt.

A built-in wins over a custom command of the same name, as in the reference. The lists
for `initialize` (`commands`) and `system/init` (`slash_commands`) come from here too.
"""

# No `from __future__ import annotations`: the command list is built before the first frame, and a
# NamedTuple's string annotations cost a compile() each; the first compile() of a process
# also builds the AST types (~2 ms). See wisp.runtime.config.
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.commands.custom import CustomCommand
    from wisp.project.context import ProjectContext



class BuiltIn(NamedTuple):
    name: str
    description: str
    argument_hint: str
    aliases: tuple[str, ...] = ()


BUILT_INS = (
    BuiltIn("clear", "Start a new session with empty context", "", ("reset", "new")),
    BuiltIn("compact", "Free up context by summarizing the conversation so far",
            "<optional custom summarization instructions>"),
)
_BY_NAME = {name: b.name for b in BUILT_INS for name in (b.name, *b.aliases)}


class LocalCommand(NamedTuple):
    """A built-in named by a prompt: `name` is its canonical name."""

    name: str
    args: str


def prompt_text(content: str | list[JSON]) -> str | None:
    """The prompt as text when it is only text (a string or one text block)."""
    if isinstance(content, str):
        return content
    if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text":
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def local_command(content: str | list[JSON]) -> LocalCommand | None:
    """The built-in this prompt runs, or None. Cheap: print mode asks before it loads
    the engine."""
    text = prompt_text(content)
    if text is None or not text.startswith("/"):
        return None
    from wisp.commands.custom import parse_slash

    parsed = parse_slash(text)
    if parsed is None or parsed[0] not in _BY_NAME:
        return None
    return LocalCommand(_BY_NAME[parsed[0]], parsed[1])


def plugin_roots(project: "ProjectContext | None") -> list[tuple[str, Path]]:
    """(plugin, folder) of each plugin's commands."""
    if project is None:
        return []
    return [(ns or "", folder) for _, folder, ns in project.roots("commands") if ns]


def commands_of(cwd: Path, config_dir: Path, project: "ProjectContext | None" = None
                ) -> "dict[str, CustomCommand]":
    """The custom commands. The parser loads only when a commands folder exists: this
    runs before print mode's first frame, and most projects have none."""
    plugins = plugin_roots(project)
    folders = [config_dir / "commands", cwd / ".claude" / "commands",
               *(folder for _, folder in plugins)]
    if not any(os.path.isdir(folder) for folder in folders):
        return {}
    from wisp.commands.custom import load_commands

    # Without a project context (a bare helper call) both folders count, as with every
    # settings source loaded.
    return load_commands(cwd, config_dir, plugins,
                         project.sources if project is not None else ("user", "project"))


def expand_prompt(content: str | list[JSON], cwd: Path, config_dir: Path,
                  project: "ProjectContext | None" = None) -> str | list[JSON]:
    """The prompt the model sees: a custom command or a skill named after `/` expanded,
    anything else unchanged."""
    text = prompt_text(content)
    if text is None or not text.startswith("/"):
        return content
    from wisp.commands.custom import parse_slash

    parsed = parse_slash(text)
    if parsed is None or parsed[0] in _BY_NAME:
        return content
    name, args = parsed
    command = commands_of(cwd, config_dir, project).get(name)
    if command is not None:
        return invocation(command, args)
    skill = project.skills.get(name) if project is not None else None
    if skill is not None:
        return skill_invocation(name, skill.load_body(), args)
    return content


def invocation(command: "CustomCommand", args: str) -> list[JSON]:
    """What the reference sends for `/name args`: which command ran, then its body."""
    from wisp.commands.custom import expand

    header = (f"<command-message>{command.name}</command-message>\n"
              f"<command-name>/{command.name}</command-name>\n"
              f"<command-args>{args}</command-args>")
    return [{"type": "text", "text": header}, {"type": "text", "text": expand(command, args)}]


def skill_invocation(name: str, body: str, args: str) -> list[JSON]:
    """`/skill args`: the skill's instructions sent at once, as a command's body is."""
    header = (f"<command-message>{name}</command-message>\n"
              f"<command-name>/{name}</command-name>\n"
              f"<command-args>{args}</command-args>")
    text = f"{body.strip()}\n\nARGUMENTS: {args}" if args else body.strip()
    return [{"type": "text", "text": header}, {"type": "text", "text": text}]


def listing(cwd: Path, config_dir: Path, project: "ProjectContext | None" = None
            ) -> list[JSON]:
    """`initialize`'s `commands` (the SDKs' `supportedCommands()`): the skills, the custom
    commands by name, then the built-ins, in the reference's shape."""
    rows: list[JSON] = [s.describe() for s in (project.skills.values() if project else ())]
    rows += [
        {"name": name, "description": f"{c.description} ({c.source})".lstrip(),
         "argumentHint": c.argument_hint or ""}
        for name, c in commands_of(cwd, config_dir, project).items()]
    for b in BUILT_INS:
        row: JSON = {"name": b.name, "description": b.description,
                     "argumentHint": b.argument_hint}
        if b.aliases:
            row["aliases"] = list(b.aliases)
        row["builtin"] = True
        rows.append(row)
    return rows


def names(cwd: Path, config_dir: Path, project: "ProjectContext | None" = None) -> list[str]:
    """`system/init`'s `slash_commands`: skills, custom commands, built-ins."""
    skills = list(project.skills) if project is not None else []
    return list(dict.fromkeys([*skills, *commands_of(cwd, config_dir, project),
                               *(b.name for b in BUILT_INS)]))
