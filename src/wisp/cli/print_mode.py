"""`wisp -p`: run one prompt headless and print text, one JSON result, or NDJSON frames.

The `system/init` frame goes out before the model provider is even constructed, so a
client sees life from wisp as early as possible. With `--mcp-config` it waits until the
servers have connected instead (as Claude Code does): init then lists their tools and
each server's real status, and the first model request, which needs those tools, could
not have gone out sooner anyway.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from wisp.cli.main import end_startup
from wisp.errors import UsageError
from wisp.jsonsafe import encode_utf8
from wisp.jsontypes import JSON
from wisp.launch.options import Options
from wisp.tools.reaper import end_all_processes
from wisp.wire import frames
from wisp.wire.writer import CollectingSink, FrameSink, NDJSONWriter, dumps

if TYPE_CHECKING:
    from wisp.cli.interrupts import Interrupts
    from wisp.engine.events import ApiRetry, Event, EventSink
    from wisp.engine.outcome import Outcome
    from wisp.project.context import ProjectContext
    from wisp.runtime.quiet import QuietTurn
    from wisp.runtime.runtime import Runtime
    from wisp.sessions.resume import SessionNotFound
    from wisp.settings.loader import Settings



def run_print(opts: Options) -> int:
    from wisp.cli.prompt_source import read_prompt
    from wisp.sessions.resume import SessionNotFound

    prompt = read_prompt(opts)
    try:
        early = PrintStart(opts, prompt)
    except SessionNotFound as exc:
        start_failed(opts, exc)
        return 1
    if early.missing_key is not None:
        return not_logged_in(opts, early, early.missing_key)
    import asyncio

    from wisp.cli.interrupts import Interrupts

    interrupts = Interrupts()
    try:
        return asyncio.run(_run(opts, prompt, early, interrupts))
    finally:
        interrupts.restore()
        end_all_processes()  # tools' leftovers and MCP servers, however the run ended


def start_failed(opts: Options, exc: SessionNotFound) -> None:
    """The reference prints these without "Error: ", and in stream-json answers with an
    error result too (print mode and duplex alike), so an SDK raises the message."""
    if opts.output_format == "stream-json":
        NDJSONWriter().write(frames.start_failed(str(exc), exc.session_id))
        sys.stdout.flush()
    sys.stderr.write(f"{exc}\n")


def not_logged_in(opts: Options, early: PrintStart, message: str) -> int:
    """No key and no endpoint: the run ends before the engine loads, with the frames a
    model call failing that way gives (stream-json: `system/init`, the error as the
    assistant's word, the result; json: the result) and the line on stderr in every
    format, since that is where a person looks when nothing happens."""
    said, result = frames.not_logged_in(message, early.init_fields["session_id"])
    if opts.output_format == "stream-json":
        early.write_init()
        early.out.write(said)
        early.out.write(result)
    elif opts.output_format == "json":
        _print(dumps(result) + "\n")
    sys.stdout.flush()
    sys.stderr.write(message + "\n")
    return 1


class PrintStart:
    """What is known before the engine loads: enough for `system/init`, which a
    stream-json client gets before asyncio and the engine are even imported."""

    def __init__(self, opts: Options, prompt: str = "") -> None:
        from wisp.launch.startup import (
            api_key_source,
            effective_mode,
            env_overlay,
            load_settings_for,
            missing_key,
            offered_tool_names,
            starting_model,
        )
        from wisp.project.context import open_project
        from wisp.sessions.resume import resolve_start

        self.settings = load_settings_for(opts, os.environ)
        env = env_overlay(os.environ, self.settings)  # the session's, as the runtime's
        self.project = open_project(opts.runtime, env, self.settings)  # memory, agents, plugins…
        self.start = resolve_start(opts.runtime, env)  # bad session flags fail before any frame
        self.model = starting_model(opts.runtime, self.settings, env)
        self.mode = effective_mode(opts.runtime, self.settings, env)
        self.missing_key = missing_key(self.model, self.settings, env)
        # Frames go to stdout as they come (stream-json) or are kept for the end (json;
        # text keeps only the outcome).
        self.out: FrameSink = (NDJSONWriter() if opts.output_format == "stream-json"
                               else CollectingSink())
        from wisp.runtime.facts import configured_mcp_servers

        # Bad --mcp-config JSON: an error before any frame.
        self.mcp_entries: dict[str, JSON] = configured_mcp_servers(
            opts.runtime.mcp_config, opts.runtime.strict_mcp_config, self.settings,
            self.project.plugin_mcp_servers(), cwd=opts.runtime.cwd, env=env)
        self.init_fields: JSON = dict(
            session_id=self.start.session_id, cwd=str(opts.runtime.cwd),
            tools=offered_tool_names(opts.runtime, bool(self.project.skills)),
            model=self.model, permission_mode=self.mode, api_key_source=api_key_source(env),
            slash_commands=_slash_commands(opts, env, self.project),
            sandbox=_sandbox_status(self.settings, env),
            **self.project.init_fields(_flag_agent_names(opts)))
        # /clear starts another session before anything is said: `system/init` waits for
        # it, to name the new one (`announce`).
        self.deferred: tuple[list[str] | None, list[JSON] | None] | None = (
            (None, None) if _clears(prompt) else None)
        if not self.mcp_entries and self.missing_key is None:
            self.write_init()

    def write_init(self, mcp_tools: list[str] | None = None,
                   mcp_servers: list[JSON] | None = None) -> None:
        if self.deferred is not None:
            self.deferred = (mcp_tools, mcp_servers)
            return
        fields = self.init_fields
        tools = [*fields["tools"], *(mcp_tools or [])]
        self.out.write(frames.init(**{**fields, "tools": tools}, mcp_servers=mcp_servers))
        memory = self.project.memory_frame_fields()
        if memory is not None:
            self.out.write(frames.system("memory_recall", fields["session_id"], **memory))

    def announce(self, session_id: str) -> None:
        """The turn's session is known: a deferred `system/init` goes out now."""
        if self.deferred is not None:
            held, self.deferred = self.deferred, None
            self.init_fields["session_id"] = session_id
            self.write_init(*held)


def _sandbox_status(settings: Settings, env: Mapping[str, str]) -> JSON | None:
    """Only a session with `sandbox` in its settings loads the sandbox's modules."""
    if not any("sandbox" in s.doc for s in settings.sources) and not settings.errors:
        return None
    from wisp.sandbox.report import early_status

    return early_status(settings, env)


def _slash_commands(opts: Options, env: Mapping[str, str], project: ProjectContext
                    ) -> list[str]:
    from wisp.commands.prompts import names
    from wisp.paths import config_dir

    return names(opts.runtime.cwd, config_dir(env), project)


def _flag_agent_names(opts: Options) -> list[str]:
    """The agents `--agents` defines; a bad value is reported when the engine loads."""
    if not opts.runtime.agents_json:
        return []
    from wisp.project.agents import agents_flag

    try:
        return list(agents_flag(opts.runtime.agents_json))
    except (OSError, UsageError):
        return []


def _clears(prompt: str) -> bool:
    if not prompt.startswith("/"):
        return False
    from wisp.commands.prompts import local_command

    command = local_command(prompt)
    return command is not None and command.name == "clear"


async def _run(opts: Options, prompt: str, early: PrintStart, interrupts: Interrupts) -> int:
    from wisp.launch.setup import runtime_config
    from wisp.runtime.runtime import Runtime
    from wisp.wire.projection import StreamJson

    config = runtime_config(opts, os.environ, settings=early.settings, start=early.start,
                            project=early.project)
    # Results wait in `results` until SessionEnd hooks have run (they come before the
    # last result, as ever) or until print mode shows an earlier turn's (`_turns`).
    results = _Results(opts, early.out)
    projection = StreamJson(early.out, early.start.session_id, results=results.receive)
    projection.forward_subagent_text = opts.runtime.forward_subagent_text
    projection.internal_frames = os.environ.get("WISP_PROGRESS_FRAMES") == "1"
    watching = opts.output_format != "stream-json"  # retries are frames there
    runtime = Runtime.open(config, RetryNotices(projection) if watching else projection)
    signalled = interrupts.arm(runtime)
    if early.mcp_entries:
        await _connect_mcp(runtime, early)
    end_startup()  # main() disabled collection while importing
    try:
        outcome = await _turns(runtime.run_until_quiet(
            prompt, announce=lambda: early.announce(runtime.session.session_id),
            announce_woken=lambda: _init_again(runtime, early)), results)
    finally:
        # SessionEnd hooks, then MCP servers politely (stdin EOF); run_print's
        # end_all_processes() then ends whatever is left.
        await runtime.aclose()
    last = results.last(outcome)
    if last is not None:
        frame, outcome = last
        _finish(opts, early.out, frame, outcome, results.shown)
    code = 0 if _succeeded(outcome) else 1
    if signalled:
        _leave_now(code)
    return code


def _leave_now(code: int) -> None:
    """After a signal the run is over once its result is out. asyncio.run would still
    wait for the worker threads of tools (a WebFetch in a slow read, a Glob's walk),
    which nothing can cancel: a signalled wisp must be gone at once, so it does not."""
    sys.stdout.flush()
    sys.stderr.flush()
    end_all_processes()
    os._exit(code)


class RetryNotices:
    """Passes every event on, and says each retry on stderr: in text and json output the
    frames are not shown, and a run that waits on a failing endpoint must not look hung."""

    def __init__(self, inner: EventSink) -> None:
        from wisp.engine.events import ApiRetry

        self.inner = inner
        self._retry = ApiRetry  # the engine is loaded by now; here it costs nothing

    def emit(self, event: Event) -> None:
        if isinstance(event, self._retry):
            from wisp.diagnostics import warn

            warn(f"wisp: {retry_notice(event)}\n")
        self.inner.emit(event)


def retry_notice(event: ApiRetry) -> str:
    """`cannot reach http://127.0.0.1:9 (connection refused); retrying in 1s (2/3)`:
    the attempt about to start, of all there may be."""
    seconds = event.delay_ms / 1000
    wait = f"{seconds:.1f}".removesuffix(".0") + "s" if seconds >= 0.1 else f"{event.delay_ms}ms"
    what = event.message if event.status is None else f"API error {event.status} ({event.message})"
    return f"{what}; retrying in {wait} ({event.attempt + 1}/{event.max_retries + 1})"


class _Results:
    """The result frames of a run's turns, in print mode's hands until it shows them.
    Those of turns before the last (a background task's end wakes a turn of its own) are
    shown as they come, or later while a background subagent still runs (as the
    reference holds them); `--output-format json` shows only the last."""

    def __init__(self, opts: Options, out: FrameSink) -> None:
        self.opts = opts
        self.out = out
        self.latest: JSON | None = None  # the newest turn's result, not yet placed
        self.pending: list[tuple[JSON, Outcome]] = []  # earlier turns', not yet shown
        self.shown = 0

    def receive(self, frame: JSON) -> None:
        self.latest = frame

    def earlier(self, outcome: Outcome, *, show_now: bool) -> None:
        """The newest result is not the run's last: shown now, or held (`show_now`)."""
        assert self.latest is not None
        self.pending.append((self.latest, outcome))
        self.latest = None
        if show_now:
            self.flush()

    def last(self, outcome: Outcome) -> tuple[JSON, Outcome] | None:
        """The run's last result with its outcome (None when no turn wrote one), after
        every earlier one still held has been shown."""
        last = (self.latest, outcome) if self.latest is not None else (
            self.pending.pop() if self.pending else None)
        self.flush()
        return last

    def flush(self) -> None:
        from wisp.wire.projection import text_output

        for result, outcome in self.pending:
            if self.opts.output_format == "text":
                _print(("\n" if self.shown else "") + text_output(outcome) + "\n")
            elif self.opts.output_format == "stream-json" or self.opts.verbose:
                self.out.write(result)
            self.shown += 1
        self.pending = []


async def _turns(turns: AsyncIterator[QuietTurn], results: _Results) -> Outcome:
    """The prompt's turn, then each turn a background task's end wakes: wisp waits for
    the tasks still running when a turn ends, and the run is over when none is left
    (docs/protocol.md, "Tasks"). A turn with more to come is an earlier one: its result
    is shown now, or held while a background subagent still runs. Returns the last
    turn's outcome."""
    outcome: Outcome | None = None
    async for turn in turns:
        outcome = turn.outcome
        if turn.more:
            results.earlier(outcome, show_now=not turn.agents_running)
    assert outcome is not None  # the prompt's turn always comes
    return outcome


def _init_again(runtime: Runtime, early: PrintStart) -> None:
    """A turn of its own gets its own `system/init`, as every turn does in the reference."""
    session = runtime.session
    fields = {**early.init_fields, "session_id": session.session_id,
              "tools": runtime.offered_tool_names, "model": session.model,
              "permission_mode": session.permission_mode}
    servers = runtime.mcp.init_entries() if early.mcp_entries else None
    early.out.write(frames.init(**fields, mcp_servers=servers))


def _succeeded(outcome: Outcome) -> bool:
    from wisp.engine.outcome import Success

    return isinstance(outcome, Success)


async def _connect_mcp(runtime: Runtime, early: PrintStart) -> None:
    """Connects every configured server (all at once), offers their tools, and only then
    writes `system/init` (see module doc)."""
    await runtime.connect_mcp()
    tools = runtime.mcp.tools(runtime.disabled_tools)
    early.write_init([tool.name for tool in tools], runtime.mcp.init_entries())


def _finish(opts: Options, out: FrameSink, result: JSON, outcome: Outcome,
            shown: int = 0) -> None:
    """The last result. `shown`: results of earlier turns already shown (text output
    separates each from the one before with a blank line)."""
    from wisp.wire.projection import text_output

    if opts.output_format == "stream-json":
        out.write(result)
        return
    if opts.output_format == "json":
        if opts.verbose and isinstance(out, CollectingSink):
            _print(dumps([*out.frames, result]) + "\n")
        else:
            _print(dumps(result) + "\n")
        return
    text = ("\n" if shown else "") + text_output(outcome)
    _print(text if result.get("subtype") == "error_max_turns" else text + "\n")


def _print(text: str) -> None:
    """UTF-8 whatever the locale, as the stream-json writer does, and lone surrogates as
    U+FFFD: the text stream's strict encode would raise on them after the run is done."""
    sys.stdout.flush()
    sys.stdout.buffer.write(encode_utf8(text))
    sys.stdout.buffer.flush()
