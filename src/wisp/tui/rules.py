"""The rule behind "Yes, and don't ask again" in a permission dialog: suggested, checked,
saved.

The suggestion should be a rule wisp's own engine will match the next time (a rule that
never matches means the user is asked again after saying "don't ask again"), and no
broader than the call the user just saw. So it is written in the syntax of
`wisp.rules`, against the forms the engine really compares (the one
exception, exact rules for compound Bash lines, is explained at `command_rule`):

- Bash rules match each simple command of a line separately, by its normalised text
  (quotes removed, the command name reduced to its basename): `Bash(npm test:*)`.
- Path rules match normalised absolute paths. `//abs/path` is absolute both here and in
  Claude Code, which shares `.claude/settings.local.json`; `./rel` is relative to the
  working folder in both. (A single leading `/` would be absolute to wisp but
  project-relative to Claude Code, so it is never suggested.)

The rule is saved to `<cwd>/.claude/settings.local.json`, the personal, uncommitted
settings of the project. Saving keeps everything else in the file as it was and never
overwrites a file it cannot parse.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from wisp.jsontypes import JSON
from wisp.rules import Rule, normalise_path, split_rule_list
from wisp.tools.base import Tool

# Patterns stay strings and are compiled by `re` on first use: this module is imported
# when the UI starts, long before the first dialog.
#
# A word that names a subcommand (`git commit`, `npm test`, `cargo build`): a plain word
# starting with a letter. Options, paths, file names (`script.py`), numbers, assignments,
# expansions, quotes and globs all fail it.
_SUBCOMMAND = r"[A-Za-z][A-Za-z0-9_-]*"
# A command word that needs no shell processing: anything else (quotes, `$`, globs,
# redirections, `(`) means the word the engine sees differs from the one typed.
_PLAIN_COMMAND = r"[A-Za-z0-9_./+][A-Za-z0-9_./+-]*"
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*\+?="
# Tool names as the Messages API allows them (MCP names are `mcp__server__tool`).
_TOOL_NAME = r"[A-Za-z0-9_-]+"
_GLOB_MAGIC = re.escape("*?[")
_ESCAPES = {"*": "[*]", "?": "[?]", "[": "[\\[]"}


# ---- suggesting -----------------------------------------------------------------------


def suggest_rule(tool: Tool, tool_input: JSON, *, cwd: Path | None = None) -> str:
    """The allow rule that would have let this call through, kept as narrow as is useful.

    `cwd` is the session's working folder (default: the process's), against which
    relative paths resolve and which decides between `./rel` and `//abs` spellings.
    Returns "" when the call offers nothing sensible to remember (a blank command, a URL
    without a host, a file tool without a path): the fallback, the bare tool name, would
    allow every call of that tool.
    """
    if tool.rule_subject == "command":
        return command_rule(tool.name, tool.subject(tool_input))
    if tool.rule_subject == "domain":
        host = tool.subject(tool_input)
        return f"{tool.name}(domain:{host})" if host else ""
    if tool.kind in ("read", "edit"):
        paths = tool.target_paths(tool_input)
        if not paths:
            return ""
        family = "Edit" if tool.kind == "edit" else "Read"
        where = Path.cwd() if cwd is None else cwd
        return f"{family}({path_content(paths[0], where, tool.searches_folders)})"
    return tool.name  # no content rules exist for it (MCP tools, TodoWrite, Task…)


def suggest_rules(tool: Tool, tool_input: JSON, *, cwd: Path | None = None,
                  env: dict[str, str] | None = None) -> list[str]:
    """The rules "don't ask again" saves: `suggest_rule`'s, except for a command line that
    needs an exact rule (several commands, assignments, …): there, one prefix rule per
    simple command it runs, read off wisp's shell analysis, because the engine judges each
    simple command on its own and would never match the exact rule. An analysis that
    cannot resolve the line suggests nothing (such a call is asked about every time)."""
    if tool.rule_subject != "command":
        rule = suggest_rule(tool, tool_input, cwd=cwd)
        return [rule] if rule else []
    line = tool.subject(tool_input)
    rule = command_rule(tool.name, line)
    if not rule or rule.endswith(":*)"):
        return [rule] if rule else []
    from wisp.shell import analyse

    where = Path.cwd() if cwd is None else cwd
    analysis = analyse(line, cwd=str(where), env=env or {})
    if analysis.unresolved or not analysis.commands:
        return []
    rules: list[str] = []
    for command in analysis.commands:
        each = command_rule(tool.name, command.text)
        if each and each not in rules:
            rules.append(each)
    return rules


def command_rule(tool_name: str, command: str) -> str:
    """`Bash(<prefix>:*)` for one plain command; `Bash(<exact line>)` when a prefix could
    not be read off safely (several commands, substitutions, leading assignments, a
    quoted or expanded command name).

    Caveat: the engine judges each simple command of a line on its own, by its
    normalised text (no assignments, no quotes), so an exact rule for a compound line or
    one with assignments matches none of them: saving it does not stop the next dialog
    for that line. It is still the narrowest honest record of what was approved."""
    line = command.strip()
    if not line:
        return ""
    words = line.split()
    first = words[0]
    if (is_compound(line) or re.match(_ASSIGNMENT, first)
            or not re.fullmatch(_PLAIN_COMMAND, first)):
        return f"{tool_name}({line})"
    # The engine matches a command by its name's basename (`./run.sh x` is `run.sh x`),
    # so a prefix spelled with the path would never match.
    prefix = first.rstrip("/").rsplit("/", 1)[-1] or first
    if len(words) > 1 and re.fullmatch(_SUBCOMMAND, words[1]):
        prefix = f"{prefix} {words[1]}"
    return f"{tool_name}({prefix}:*)"


def is_compound(line: str) -> bool:
    """Whether `line` can run more than one command: `&&`, `||`, `;`, `|`, `&`, a newline,
    a backtick, `$(…)` or a process substitution outside single quotes (in double quotes
    substitutions still run). An unclosed quote counts too: the line cannot be read."""
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            i += 2  # an escaped character is literal (`find … \;`), newline included
            continue
        elif char == "`" or line.startswith("$(", i):
            return True
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif _separator_at(line, i):
            return True
        i += 1
    return quote != ""


def _separator_at(line: str, i: int) -> bool:
    """An unquoted `;`, `|`, newline, `<(`, `>(` or `&` that ends a command (`a & b`,
    `a && b`), but not the `&` of a redirection such as `2>&1` or `&>file`."""
    char = line[i]
    if char in ";|\n" or line.startswith(("<(", ">("), i):
        return True
    if char != "&":
        return False
    before = line[i - 1] if i else ""
    after = line[i + 1] if i + 1 < len(line) else ""
    return before not in ("<", ">") and after != ">"


def path_content(raw: str, cwd: Path, whole_folder: bool) -> str:
    """The path part of a Read/Edit rule for a call on `raw`: its folder and everything
    below, `./rel/**` inside the working folder, `//abs/**` outside.

    A search (Grep, Glob) names a folder; it gets the folder itself (`./src`): the
    engine matches a plain folder pattern to the folder and all below it, while
    `./src/**` would not match the searched folder itself."""
    root = normalise_path(str(cwd), cwd)
    target = normalise_path(raw, cwd)
    if whole_folder and not re.search(f"[{_GLOB_MAGIC}]", target):
        return _spell(target, root)
    spelled = _escape_glob(_spell(os.path.dirname(target), root))
    return spelled + ("**" if spelled.endswith("/") else "/**")


def _spell(path: str, root: str) -> str:
    if path == root:
        return "."
    base = root.rstrip("/")
    if path.startswith(base + "/"):
        return "./" + path[len(base) + 1:]
    return "/" + path  # `//abs`: absolute to wisp and to Claude Code


def _escape_glob(text: str) -> str:
    """A folder name with `*`, `?` or `[` must match only itself: each becomes a
    one-character class (`[*]`), which both glob matchers read literally. `[` is written
    `[\\[]` (`[` or a backslash to wisp's matcher, `[` to Claude Code's) because `[[]`
    makes Python's `re` warn about a possible nested set."""
    return re.sub(f"[{_GLOB_MAGIC}]", lambda m: _ESCAPES[m.group()], text)


# ---- checking ---------------------------------------------------------------------------


def validate_rule(text: str) -> str | None:
    """Why `text` is not a usable rule, or None. Beyond what wisp's parser rejects
    (it reads anything it cannot split as a bare tool name), this catches rules that
    parse but could never match: a bad tool name, `WebFetch` without `domain:`, an
    empty command prefix."""
    text = text.strip()
    if not text:
        return "The rule is empty: write Tool or Tool(content), e.g. Bash(npm test:*)."
    rule = Rule.parse(text)
    if "(" in rule.tool or ")" in rule.tool:
        return "Unbalanced parentheses: write Tool or Tool(content), e.g. Bash(npm test:*)."
    if not re.fullmatch(_TOOL_NAME, rule.tool):
        return (f"{rule.tool!r} is not a tool name: use letters, digits, _ and -, "
                "then the content in parentheses.")
    return _content_problem(rule)


def _content_problem(rule: Rule) -> str | None:
    content = rule.content
    if content is None:
        return None
    if rule.tool == "WebFetch":
        host = content.removeprefix("domain:").strip() if content.startswith("domain:") else ""
        if not host:
            return "WebFetch rules name a host: WebFetch(domain:example.com)."
    if content.endswith(":*") and not content[:-2].strip():
        return f"The command prefix is empty: write e.g. {rule.tool}(npm test:*)."
    return None


# ---- saving -----------------------------------------------------------------------------


def save_allow_rule(cwd: Path, rule: str) -> Path:
    """Adds `rule` to `permissions.allow` of `<cwd>/.claude/settings.local.json` unless an
    equal rule is there already, and returns the file's path. ValueError when the rule is
    not valid or the file exists but is not a settings document wisp would load (it is
    left untouched then)."""
    rule = rule.strip()
    problem = validate_rule(rule)
    if problem:
        raise ValueError(problem)
    path = cwd / ".claude" / "settings.local.json"
    doc = read_settings_doc(path, "The rule was not saved.")
    allow = _allow_list(doc)
    wanted = Rule.parse(rule)
    if any(Rule.parse(existing) == wanted for existing in allow):
        return path
    allow.append(rule)
    write_atomically(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


def read_settings_doc(path: Path, unsaved: str) -> JSON:
    """A settings file's document ({} when absent or empty). ValueError, ending with
    `unsaved`, when it is not one wisp would load: a change made to it would never apply."""
    from wisp.settings.schema import validate_settings

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason}). {unsaved}") from exc
    if not text.strip():
        return {}
    try:
        doc: JSON = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}); fix it and try again. {unsaved}") from exc
    problems = validate_settings(doc)
    if problems:
        # wisp skips such a file, so a rule added to it would never apply.
        raise ValueError(f"{path} is not valid settings ({'; '.join(problems)}); fix it "
                         f"and try again. {unsaved}")
    return doc  # an object, with permissions.allow a list of strings if present: checked


def _allow_list(doc: JSON) -> list[str]:
    """`doc["permissions"]["allow"]`, created (at the end, keeping key order) if absent."""
    allow: list[str] = doc.setdefault("permissions", {}).setdefault("allow", [])
    return allow


def write_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never a half-written one. The file keeps
    its permission bits; a symlinked file is written where the link points."""
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    # O_EXCL: never write through a file someone else put there. 0o666 lets the umask
    # decide a new file's mode, as for any file the user creates.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


split_rules = split_rule_list  # the dialog's edited rule line
