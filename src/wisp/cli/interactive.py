"""`wisp` in a terminal: the interactive UI (`wisp.tui`), built from the same argv options
as print mode. prompt_toolkit and rich load only here."""

from __future__ import annotations

import os
import sys

from wisp.cli.options import Options
from wisp.errors import UsageError

NOT_A_TERMINAL = ("the interactive terminal UI needs a terminal, and stdout is not one; "
                  "use -p/--print to run a prompt headless "
                  "(e.g. wisp -p \"...\" --output-format text)")


def run_interactive(opts: Options) -> int:
    if not sys.stdout.isatty():
        raise UsageError(NOT_A_TERMINAL)
    import asyncio

    from wisp.cli.main import end_startup
    from wisp.cli.setup import runtime_config
    from wisp.cli.startup import load_settings_for, missing_key, starting_model
    from wisp.runtime.facts import env_overlay
    from wisp.sessions.resume import SessionNotFound, resolve_start

    settings = load_settings_for(opts, os.environ)
    env = env_overlay(os.environ, settings)
    try:
        start = resolve_start(opts, env)
    except SessionNotFound as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    shown_model = starting_model(opts, settings, env)
    missing = missing_key(shown_model, settings, env)
    if missing is not None:  # a UI that could only fail each prompt is no way to say so
        sys.stderr.write(f"{missing}\n")
        return 1
    config = runtime_config(opts, os.environ, settings=settings, start=start)
    from wisp.tui.app import TuiApp

    async def main() -> int:
        app = TuiApp(config, os.environ, shown_model)
        end_startup()
        return await app.run(opts.prompt)

    return asyncio.run(main())
