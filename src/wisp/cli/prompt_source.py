"""Where print mode's prompt comes from: the argument, stdin, or both (the argument, then
what was piped: `git diff | wisp -p "review this"`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from wisp.errors import UsageError
from wisp.jsonsafe import scrub_surrogates

if TYPE_CHECKING:
    from wisp.launch.options import Options


def read_prompt(opts: Options) -> str:
    # A prompt that is not UTF-8 (a Latin-1 file piped in, a raw byte in argv) is shown to
    # the model with U+FFFD, as tools show undecodable output: a strict decode would end
    # the run, and lone surrogates would go on to every writer and the API.
    if opts.prompt:
        piped = _piped_text() if not sys.stdin.isatty() else ""
        # As the reference: the argument, then what was piped (`git diff | wisp -p "review"`).
        return scrub_surrogates(f"{opts.prompt}\n{piped}" if piped else opts.prompt)
    if not sys.stdin.isatty():
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
        if text.strip():
            return text.rstrip("\n")
    raise UsageError(
        "Input must be provided either through stdin or as a prompt argument when using --print"
    )


# How long a prompt given as an argument waits for piped input to start (the reference's 3 s):
# a stdin inherited from a parent that never writes or closes it must not hang the run.
STDIN_GRACE_SECONDS = 3.0


def _piped_text() -> str:
    """All of stdin once it has something (or has ended); "" with a warning if nothing
    comes within the grace period."""
    import select

    try:
        ready, _, _ = select.select([sys.stdin.fileno()], [], [], STDIN_GRACE_SECONDS)
    except (OSError, ValueError):
        return ""
    if not ready:
        sys.stderr.write(f"Warning: no stdin data received in {STDIN_GRACE_SECONDS:g}s, "
                         "proceeding without it. To skip the wait, redirect stdin: "
                         "< /dev/null.\n")
        return ""
    return sys.stdin.buffer.read().decode("utf-8", "replace")
