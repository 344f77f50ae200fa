"""`wisp` in a terminal: the interactive UI (`wisp.tui`), built from the same argv options
as print mode. prompt_toolkit and rich load only here."""

from __future__ import annotations

import os
import sys

from wisp.errors import UsageError
from wisp.launch.options import Options

NOT_A_TERMINAL = ("the interactive terminal UI needs a terminal, and stdout is not one; "
                  "use -p/--print to run a prompt headless "
                  "(e.g. wisp -p \"...\" --output-format text)")


def run_interactive(opts: Options) -> int:
    if not sys.stdout.isatty():
        raise UsageError(NOT_A_TERMINAL)
    import asyncio

    from wisp.cli.main import end_startup
    from wisp.launch.setup import runtime_config
    from wisp.launch.startup import load_settings_for, missing_key, starting_model
    from wisp.runtime.facts import env_overlay
    from wisp.sessions.resume import SessionNotFound, resolve_start
    from wisp.tui.trust_dialog import settle

    # Trust first: nothing of the folder (settings, hooks, MCP servers, memory) is
    # loaded until the user has answered.
    env = dict(os.environ)
    refused = settle(opts.runtime.cwd, env, opts.runtime.setting_sources)
    if refused is not None:
        return refused
    settings = load_settings_for(opts, env)
    overlaid = env_overlay(env, settings)
    try:
        start = resolve_start(opts.runtime, overlaid)
    except SessionNotFound as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    shown_model = starting_model(opts.runtime, settings, overlaid)
    missing = missing_key(shown_model, settings, overlaid)
    if missing is not None:  # a UI that could only fail each prompt is no way to say so
        sys.stderr.write(f"{missing}\n")
        return 1
    config = runtime_config(opts, env, settings=settings, start=start)
    from wisp.tui.app import TuiApp

    async def main() -> int:
        app = TuiApp(config, env, shown_model)
        end_startup()
        return await app.run(opts.prompt)

    return asyncio.run(main())
