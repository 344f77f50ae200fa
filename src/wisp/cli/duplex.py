"""Entry for `--input-format stream-json`: the bidirectional SDK protocol.

Start-up order matters for the SDKs, which wait on the `initialize` answer: settings are
loaded and the answer is written (`wisp.duplex.early`) before asyncio and the engine are
imported, then the session starts with whatever stdin bytes were already read.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from wisp.cli.main import end_startup
from wisp.launch.options import Options

if TYPE_CHECKING:
    from wisp.cli.interrupts import LoopSignals
    from wisp.duplex.early import EarlyStart
    from wisp.project.context import ProjectContext
    from wisp.settings.loader import Settings


def run_duplex(opts: Options) -> int:
    from wisp.duplex.early import begin
    from wisp.launch.startup import env_overlay, load_settings_for
    from wisp.project.context import open_project

    settings = load_settings_for(opts, os.environ)
    env = env_overlay(os.environ, settings)
    _say_if_not_logged_in(opts, settings, env)
    project = open_project(opts.runtime, env, settings)  # memory, agents, skills, plugins
    early = begin(opts, env, settings, project=project)
    import asyncio
    import signal

    from wisp.cli.interrupts import LoopSignals, exit_at_once
    from wisp.sessions.resume import SessionNotFound

    # Until the session serves, SIGTERM (an SDK done with us) and SIGINT just end it.
    signals = LoopSignals((signal.SIGTERM, signal.SIGINT),
                          lambda sig: exit_at_once(143 if sig == signal.SIGTERM else 130))
    try:
        code = asyncio.run(_serve(opts, settings, early, project, signals))
    except SessionNotFound as exc:
        from wisp.cli.print_mode import start_failed

        start_failed(opts, exc)  # an error result, then the message on stderr
        code = 1
    sys.stdout.flush()
    # The stdin thread may still be blocked in read(); leave without joining it, and take
    # down any process group a tool left behind.
    from wisp.tools.reaper import end_all_processes

    end_all_processes()
    os._exit(code)


def _say_if_not_logged_in(opts: Options, settings: Settings, env: dict[str, str]) -> None:
    """No key and no endpoint: said on stderr at once (the host's log), while each turn
    ends with it as an error result (the host may still switch to a model that works).
    A provider prefix nobody defined is a UsageError here, before any answer."""
    from wisp.launch.startup import missing_key, starting_model

    missing = missing_key(starting_model(opts.runtime, settings, env), settings, env)
    if missing is not None:
        from wisp.diagnostics import warn

        warn(f"{missing}\n")


async def _serve(opts: Options, settings: Settings, early: EarlyStart,
                 project: ProjectContext, signals: LoopSignals) -> int:
    import asyncio
    import signal

    from wisp.cli.interrupts import exit_at_once
    from wisp.duplex.server import DuplexServer

    server = DuplexServer(opts, dict(os.environ), settings, project=project)
    loop = asyncio.get_running_loop()
    # Start-up ends once serve() has registered its handlers and awaits input for the first
    # time: only then does collection come back on (main() disabled it while importing).
    from wisp.cli.preload import preload_engine

    # Import the turn path while waiting for the first message; before end_startup, so it
    # runs with garbage collection still off and is frozen with the rest of start-up.
    loop.call_soon(preload_engine)
    loop.call_soon(end_startup)

    def on_term(_sig: int) -> None:
        # The SDKs send SIGTERM when they are done with us: stop tools and leave quietly.
        sys.stdout.flush()
        exit_at_once(143)

    def on_int(_sig: int) -> None:
        server.interrupt()  # the turn ends; the session goes on

    signals.route({signal.SIGTERM: on_term, signal.SIGINT: on_int})
    try:
        return await server.serve(early)
    finally:
        # MCP servers get the polite close (stdin EOF); run_duplex's end_all_processes()
        # kills whatever did not take it.
        await server.runtime.aclose()
