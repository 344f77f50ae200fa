"""`wisp -p`: run one prompt headless and print text, one JSON result, or NDJSON frames.

The `system/init` frame goes out before the model provider is even constructed, so a
client sees life from wisp as early as possible. With `--mcp-config` it waits until the
servers have connected instead (as Claude Code does): init then lists their tools and
each server's real status, and the first model request, which needs those tools, could
not have gone out sooner anyway.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from wisp.cli.main import end_startup
from wisp.cli.options import Options
from wisp.errors import UsageError
from wisp.jsonsafe import encode_utf8, scrub_surrogates
from wisp.tools.reaper import end_all_processes
from wisp.wire import frames
from wisp.wire.writer import CollectingSink, FrameSink, NDJSONWriter, dumps

if TYPE_CHECKING:
    from wisp.engine.context import RunContext
    from wisp.mcp.hub import McpHub

JSON = dict[str, Any]


def read_prompt(opts: Options) -> str:
    # A prompt that is not UTF-8 (a Latin-1 file piped in, a raw byte in argv) is shown to
    # the model with U+FFFD, as tools show undecodable output: a strict decode would end
    # the run, and lone surrogates would go on to every writer and the API.
    if opts.prompt:
        return scrub_surrogates(opts.prompt)
    if not sys.stdin.isatty():
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
        if text.strip():
            return text.rstrip("\n")
    raise UsageError(
        "Input must be provided either through stdin or as a prompt argument when using --print"
    )


def text_output(result: JSON) -> str:
    subtype = result.get("subtype")
    if subtype == "success":
        return str(result.get("result", ""))
    if subtype == "error_max_turns":
        # The reference's short form, printed without a trailing newline.
        return "Error: Reached max turns ({})".format(
            str(result["errors"][0]).rsplit("(", 1)[-1].rstrip(")"))
    errors = result.get("errors") or [subtype]
    return f"Error: {errors[0]}"


def run_print(opts: Options) -> int:
    from wisp.sessions.resume import SessionNotFound

    prompt = read_prompt(opts)
    try:
        early = EarlyStart(opts)
    except SessionNotFound as exc:
        sys.stderr.write(f"{exc}\n")  # the reference prints this one without "Error: "
        return 1
    import asyncio

    try:
        return asyncio.run(_run(opts, prompt, early))
    finally:
        end_all_processes()  # tools' leftovers and MCP servers, however the run ended


class EarlyStart:
    """What is known before the engine loads: enough for `system/init`, which a
    stream-json client gets before asyncio and the engine are even imported."""

    def __init__(self, opts: Options) -> None:
        from wisp.cli.startup import (
            api_key_source,
            effective_mode,
            load_settings_for,
            offered_tool_names,
            starting_model,
        )
        from wisp.sessions.resume import resolve_start

        env = os.environ
        self.settings = load_settings_for(opts, env)
        self.start = resolve_start(opts, env)  # bad session flags fail before any frame
        self.model = starting_model(opts, self.settings, env)
        self.mode = effective_mode(opts, self.settings)
        self.sink: FrameSink = (NDJSONWriter() if opts.output_format == "stream-json"
                                else CollectingSink())
        self.mcp_entries: dict[str, JSON] = {}
        if opts.mcp_config:
            from wisp.mcp.config import parse_mcp_configs

            self.mcp_entries = parse_mcp_configs(opts.mcp_config)  # bad JSON: before any frame
        self.init_fields: JSON = dict(
            session_id=self.start.session_id, cwd=str(opts.cwd), tools=offered_tool_names(opts),
            model=self.model, permission_mode=self.mode, api_key_source=api_key_source(env))
        if not self.mcp_entries:
            self.write_init()

    def write_init(self, mcp_tools: list[str] | None = None,
                   mcp_servers: list[JSON] | None = None) -> None:
        fields = self.init_fields
        tools = [*fields["tools"], *(mcp_tools or [])]
        self.sink.write(frames.init(**{**fields, "tools": tools}, mcp_servers=mcp_servers))


async def _run(opts: Options, prompt: str, early: EarlyStart) -> int:
    import asyncio

    from wisp.cli.setup import build_run, new_session
    from wisp.engine.hook_points import session_end, session_start
    from wisp.engine.loop import AgentLoop

    session = new_session(opts, os.environ, early.settings, start=early.start)
    ctx, tool_state = build_run(opts, session, early.sink, settings=early.settings)
    interrupts = _install_interrupt(session)
    hub = await _connect_mcp(opts, ctx, early) if early.mcp_entries else None
    end_startup()  # main() disabled collection while importing

    resumed = opts.resume is not None or opts.continue_session
    await session_start(ctx, "resume" if resumed else "startup")
    loop = AgentLoop(ctx, tool_state)
    task = interrupts["task"] = asyncio.ensure_future(loop.run(prompt))
    result = await task
    await session_end(ctx, "other")
    _finish(opts, early.sink, result)
    if hub is not None:
        await hub.close()  # politely (stdin EOF) first; run_print's end_all_processes()
        # then ends whatever is left, and what tools left running in the background
    return 1 if result["is_error"] else 0


async def _connect_mcp(opts: Options, ctx: RunContext, early: EarlyStart) -> McpHub:
    """Connects every configured server (all at once), offers their tools, and only then
    writes `system/init` (see module doc)."""
    from wisp.mcp.hub import McpHub

    hub = McpHub(None, cwd=opts.cwd)
    hub.add_configured(early.mcp_entries)
    await hub.connect_pending()
    tools = hub.tools(ctx.config.disabled_tools)
    ctx.config.tools.update({tool.name: tool for tool in tools})
    early.write_init([tool.name for tool in tools], hub.init_entries())
    return hub


def _install_interrupt(session: Any) -> dict[str, Any]:
    """SIGINT/SIGTERM: kill every tool's process group and end the run with a result.
    A second signal, or one before the run has started (MCP servers connecting), exits
    at once. Returns the slot where the run's task goes."""
    import asyncio

    loop = asyncio.get_running_loop()
    state: dict[str, Any] = {"task": None, "hits": 0}

    def on_signal() -> None:
        state["hits"] += 1
        session.abort.set()
        session.processes.kill_all()
        if state["hits"] > 1 or state["task"] is None:
            end_all_processes()
            os._exit(130)
        state["task"].cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    return state


def _finish(opts: Options, sink: FrameSink, result: JSON) -> None:
    if opts.output_format == "stream-json":
        sink.write(result)
        return
    if opts.output_format == "json":
        if opts.verbose and isinstance(sink, CollectingSink):
            _print(dumps([*sink.frames, result]) + "\n")
        else:
            _print(dumps(result) + "\n")
    else:
        text = text_output(result)
        _print(text if result.get("subtype") == "error_max_turns" else text + "\n")


def _print(text: str) -> None:
    """UTF-8 whatever the locale, as the stream-json writer does, and lone surrogates as
    U+FFFD: the text stream's strict encode would raise on them after the run is done."""
    sys.stdout.flush()
    sys.stdout.buffer.write(encode_utf8(text))
    sys.stdout.buffer.flush()
