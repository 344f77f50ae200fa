"""Output styles: how the agent talks and works, chosen by the settings' `outputStyle`.

Besides `default` (wisp's own prompt, unchanged), a few built-in styles ship here, and
users add their own as Markdown files where Claude Code keeps them:
`<config dir>/output-styles/*.md` (user), `<cwd>/.claude/output-styles/*.md` (project),
and the output-styles folders of plugins, whose styles are named `plugin:name`.

A file's front matter gives `name` (else the file's stem), `description` and
`keep-coding-instructions` (default no: a style that turns the agent into something other
than a coding assistant should not inherit the coding guidance); its body is the style's
instructions, which `wisp.prompts.system` adds to the system prompt. Names match in any
case, as users type them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from wisp.diagnostics import warn
from wisp.project.frontmatter import first_line, flag, read_markdown, scalar

DEFAULT_NAME = "default"


class OutputStyle:
    """One style. `instructions` is the text added to the system prompt."""

    __slots__ = ("description", "instructions", "keep_coding_instructions", "name", "path",
                 "source")

    def __init__(self, name: str, description: str, instructions: str, *,
                 keep_coding_instructions: bool = False, source: str = "builtin",
                 path: Path | None = None) -> None:
        self.name = name
        self.description = description
        self.instructions = instructions
        self.keep_coding_instructions = keep_coding_instructions
        self.source = source  # "builtin", "user", "project" or "plugin"
        self.path = path

    def __repr__(self) -> str:
        return f"OutputStyle(name={self.name!r}, source={self.source!r})"

    @property
    def is_default(self) -> bool:
        return self.name.lower() == DEFAULT_NAME


_EXPLANATORY = """\
Besides doing the work, help the user understand it. When you make a choice that is not \
obvious (a design, a library, an order of steps, a trade-off), say in a sentence or two why \
you made it and what the alternative would have cost. When you read code the user may not \
know well, point out what matters about how this codebase does things: its conventions, \
where responsibilities live, the traps a newcomer would fall into. Favour insight specific \
to this project over general programming knowledge. Keep these explanations short and \
next to the work they explain; the work itself must be as complete as without them."""

_LEARNING = """\
The user wants to get better at this by doing part of the work themselves. Do the \
routine parts (setup, boilerplate, searching, running tests) yourself, but when you reach \
a small piece that is worth learning from (a core bit of logic, a design decision, an \
error-handling choice, usually 2 to 10 lines), hand it to the user: put a clearly marked \
`TODO(human)` at the place in the code, then explain what the piece must do, the context \
it fits into, and the options worth weighing, and stop to let them write it. Ask for one \
such piece at a time. When they are done, read what they wrote, say what works and \
suggest improvements kindly, then carry on. Explain your own choices briefly as you go."""

_CONCISE = """\
Keep every answer as short as it can be while still complete. Lead with the result or the \
answer; no preamble, no restating the question, no closing summary of what you just did. \
Do not narrate your tool use. Prefer a sentence to a paragraph and a short list to prose \
when listing. Give details, background and alternatives only when the user asks."""


def builtin_styles() -> dict[str, OutputStyle]:
    """The styles wisp ships, keyed by lower-cased name."""
    styles = (
        OutputStyle(DEFAULT_NAME, "wisp's standard behaviour: does the work, answers briefly",
                    "", keep_coding_instructions=True),
        OutputStyle("Explanatory", "Explains its choices and the codebase as it works",
                    _EXPLANATORY, keep_coding_instructions=True),
        OutputStyle("Learning", "Leaves small pieces of code for you to write, and coaches",
                    _LEARNING, keep_coding_instructions=True),
        OutputStyle("Concise", "Short answers: the result first, no preamble or recap",
                    _CONCISE, keep_coding_instructions=True),
    )
    return {style.name.lower(): style for style in styles}


def load_styles(roots: Sequence[tuple[str, Path, str | None]]) -> dict[str, OutputStyle]:
    """The built-in styles plus those in `roots`, each (source, folder, namespace or None),
    keyed by lower-cased name. A later root replaces an earlier one's style of the same
    name, and any root a built-in, except `default`, which always means wisp's own
    prompt. Callers pass user, project, then plugins."""
    styles = builtin_styles()
    for source, folder, namespace in roots:
        for style in _styles_in(source, folder, namespace):
            key = style.name.lower()
            if key == DEFAULT_NAME:
                warn(f"wisp: warning: skipping output style {style.path}: the name "
                     f"{DEFAULT_NAME!r} is reserved for wisp's own prompt\n")
                continue
            styles[key] = style
    return styles


def _styles_in(source: str, folder: Path, namespace: str | None) -> list[OutputStyle]:
    try:  # the only system call when the folder does not exist
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for filename in names:
        if filename.startswith(".") or not filename.endswith(".md"):
            continue
        style = _read_style(folder / filename, source, namespace)
        if style is not None:
            found.append(style)
    return found


def _read_style(path: Path, source: str, namespace: str | None) -> OutputStyle | None:
    if not path.is_file():
        return None
    parsed = read_markdown(path)
    if parsed is None:
        warn(f"wisp: warning: skipping output style {path}: cannot read it as UTF-8 text\n")
        return None
    fields, body = parsed
    body = body.strip()
    name = scalar(fields.get("name")) or path.stem
    return OutputStyle(
        f"{namespace}:{name}" if namespace else name,
        scalar(fields.get("description")) or first_line(body),
        body,
        keep_coding_instructions=flag(fields.get("keep-coding-instructions")),
        source=source, path=path)


def resolve_style(name: str | None, styles: Mapping[str, OutputStyle]
                  ) -> tuple[OutputStyle, str | None]:
    """The style `name` selects (any case; None or blank selects `default`), and a
    warning for the caller to show when no style has that name, in which case the
    default applies: a typo in settings must not stop a session."""
    default = styles.get(DEFAULT_NAME) or builtin_styles()[DEFAULT_NAME]
    wanted = (name or "").strip()
    if not wanted:
        return default, None
    style = styles.get(wanted.lower())
    if style is not None:
        return style, None
    available = ", ".join(s.name for s in styles.values()) or DEFAULT_NAME
    return default, (f"unknown output style {wanted!r}; using {DEFAULT_NAME}. "
                     f"Available styles: {available}")
