"""`wisp -p`: run one prompt headless and print text, one JSON result, or NDJSON frames.

The `system/init` frame goes out before the model provider is even constructed, so a
client sees life from wisp as early as possible.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from wisp.cli.main import end_startup
from wisp.cli.options import Options
from wisp.errors import UsageError
from wisp.wire import frames
from wisp.wire.writer import CollectingSink, FrameSink, NDJSONWriter, dumps

JSON = dict[str, Any]


def read_prompt(opts: Options) -> str:
    if opts.prompt:
        return opts.prompt
    if not sys.stdin.isatty():
        text = sys.stdin.read()
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
        return asyncio.run(_run(opts, prompt))
    except SessionNotFound as exc:
        sys.stderr.write(f"{exc}\n")  # the reference prints this one without "Error: "
        return 1


async def _run(opts: Options, prompt: str) -> int:
    from wisp.cli.setup import build_run, load_settings_for, new_session

    stream = opts.output_format == "stream-json"
    sink: FrameSink = NDJSONWriter() if stream else CollectingSink()
    settings = load_settings_for(opts, os.environ)
    session = new_session(opts, os.environ, settings)
    ctx, tool_state = build_run(opts, session, sink, settings=settings)
    sink.write(frames.init(session_id=session.session_id, cwd=str(session.cwd),
                           tools=[*ctx.config.tools, *_extra_tool_names(ctx.config)],
                           model=session.model,
                           permission_mode=session.permission_mode,
                           api_key_source=ctx.config.api_key_source))
    from wisp.engine.hook_points import session_end, session_start
    from wisp.engine.loop import AgentLoop

    end_startup()  # main() disabled collection while importing

    resumed = opts.resume is not None or opts.continue_session
    await session_start(ctx, "resume" if resumed else "startup")
    loop = AgentLoop(ctx, tool_state)
    task = asyncio.ensure_future(loop.run(prompt))
    _install_interrupt(task, session)
    result = await task
    await session_end(ctx, "other")
    _finish(opts, sink, result)
    return 1 if result["is_error"] else 0


def _extra_tool_names(config: Any) -> list[str]:
    """Tools the engine handles itself (StructuredOutput) are offered too, so init lists
    them as the reference does."""
    return [str(d.get("name")) for d in config.extra_tool_definitions]


def _install_interrupt(task: asyncio.Future[JSON], session: Any) -> None:
    """SIGINT/SIGTERM: kill every tool's process group and end the run with a result.
    A second signal exits at once."""
    loop = asyncio.get_running_loop()
    hits = {"n": 0}

    def on_signal() -> None:
        hits["n"] += 1
        session.abort.set()
        session.processes.kill_all()
        if hits["n"] > 1:
            os._exit(130)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)


def _finish(opts: Options, sink: FrameSink, result: JSON) -> None:
    out = sys.stdout
    if opts.output_format == "stream-json":
        sink.write(result)
        return
    if opts.output_format == "json":
        if opts.verbose and isinstance(sink, CollectingSink):
            out.write(dumps([*sink.frames, result]) + "\n")
        else:
            out.write(dumps(result) + "\n")
    else:
        text = text_output(result)
        out.write(text if result.get("subtype") == "error_max_turns" else text + "\n")
    out.flush()
