"""wisp's own default system prompt, plus the SDK conventions for replacing it.

`--system-prompt ""` (what both SDKs send by default) means an empty prompt, not "use the
default": the flag being present is what matters, so callers pass None for "absent".
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.project.styles import OutputStyle


IDENTITY = "You are wisp, an open-source coding agent working in the user's terminal."

GUIDANCE = """\
Work on the user's request with the tools you have, then reply concisely.

How to work:
- Read before you edit. Prefer Edit for changes to existing files and Write for new ones.
- Use Glob and Grep to find code instead of guessing paths. Read whole files when they are short.
- Bash runs in the working directory. Quote paths with spaces. Avoid interactive commands;
  they have no terminal. Long-running commands time out.
- Keep changes minimal and focused; match the style of the surrounding code.
- Never invent file contents, command output or test results. If something fails, say so.
- A tool call may be denied by the user's permission settings. Do not retry the same call;
  adjust your approach or explain what you need.
- Track multi-step work with TodoWrite when it helps the user follow along.
- Answer in plain text. Reference code as path:line."""

# Stands in for GUIDANCE under an output style that does not keep the coding instructions:
# the style's own section (after the environment) says how to work.
STYLE_GUIDANCE = """\
Help with the user's request, using your tools where they help. The output style at the \
end of this prompt describes how to work and how to answer."""


def environment_section(cwd: Path) -> str:
    is_git = any((p / ".git").exists() for p in [cwd, *cwd.parents])
    return (
        "Environment:\n"
        f"- Working directory: {cwd}\n"
        f"- Git repository: {'yes' if is_git else 'no'}\n"
        f"- Platform: {_platform()}\n"
        f"- Date: {time.strftime('%Y-%m-%d')}"
    )


def _platform() -> str:
    """`linux 6.1.0`: what platform.system() and release() say, from os.uname(), which is
    where they read it on POSIX. Importing `platform` compiles a dozen regexes (~2 ms of
    every run's start-up)."""
    if not hasattr(os, "uname"):  # Windows
        import platform

        return f"{platform.system().lower()} {platform.release()}"
    uname = os.uname()
    return f"{uname.sysname.lower()} {uname.release}"


def system_blocks(cwd: Path, custom: str | None, append: str | None,
                  style: OutputStyle | None = None) -> list[JSON]:
    """The `system` field of each request. The last block is marked cacheable: it is the
    same on every call of a session, so the API can reuse it.

    A `style` other than default adds its section to wisp's prompt (dropping the coding
    guidance unless the style keeps it) or, after `custom`, to a caller's own prompt: an
    SDK user who picks a style in settings gets it whatever prompt the SDK sends."""
    if style is not None and style.is_default:
        style = None
    if custom is not None:
        text = custom
    else:
        keep = style is None or style.keep_coding_instructions
        guidance = GUIDANCE if keep else STYLE_GUIDANCE
        text = f"{IDENTITY}\n\n{guidance}\n\n{environment_section(cwd)}"
    if style is not None:
        text = _joined(text, style_section(style))
    if append:
        text = _joined(text, append)
    if not text:
        return []
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]


def style_section(style: OutputStyle) -> str:
    heading = f"# Output style: {style.name}"
    return f"{heading}\n\n{style.instructions}" if style.instructions else heading


def _joined(text: str, more: str) -> str:
    return f"{text}\n\n{more}" if text else more
