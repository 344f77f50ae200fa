"""Bash: run a shell command and report its output and exit status."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from wisp.processes.output import CappedText, Segment, clip, seg_len, strip_trailing_newlines
from wisp.tools.base import (
    JSON,
    BackgroundTasks,
    Tool,
    ToolContext,
    ToolKind,
    ToolResult,
    check_input,
)

if TYPE_CHECKING:
    from wisp.sandbox.runner import Launch
    from wisp.tools._bash_exec import Outcome

__all__ = ["Bash"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_MAX_OUTPUT = 30_000

# Exit statuses that mean an answer rather than a failure, keyed by program.
_INTERPRETATIONS: dict[tuple[str, int], str] = {
    ("grep", 1): "No matches found",
    ("rg", 1): "No matches found",
    ("diff", 1): "Files differ",
    ("cmp", 1): "Files differ",
    ("test", 1): "Condition is false",
    ("[", 1): "Condition is false",
    ("find", 1): "Some paths could not be searched",
}


def _env_int(name: str, default: int, env: Mapping[str, str] | None = None) -> int:
    try:
        value = int((os.environ if env is None else env).get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


# A raised BASH_MAX_OUTPUT_LENGTH is honoured up to here: the output travels twice in one
# stream-json line (tool_result and tool_use_result), and the Python SDK refuses lines
# over 1 MiB.
MAX_OUTPUT_CEILING = 150_000


def max_output_chars(env: Mapping[str, str] | None = None) -> int:
    """BASH_MAX_OUTPUT_LENGTH from the session's environment (`env`), capped."""
    return min(_env_int("BASH_MAX_OUTPUT_LENGTH", DEFAULT_MAX_OUTPUT, env), MAX_OUTPUT_CEILING)


def timeout_ms(requested: object, env: Mapping[str, str] | None = None) -> int:
    ceiling = _env_int("BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS, env)
    default = min(_env_int("BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS, env), ceiling)
    if isinstance(requested, bool) or not isinstance(requested, int | float) or requested <= 0:
        return default
    return min(int(requested), ceiling)


def _shell() -> str:
    if os.access("/bin/bash", os.X_OK):
        return "/bin/bash"
    import shutil

    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


def last_program(command: str) -> str:
    """The name of the last command the line runs (a pipeline's status is its last
    command's), to interpret exit codes such as grep's 1."""
    from wisp.shell import analyse

    commands = analyse(command, cwd="/", env=os.environ).commands
    return commands[-1].name if commands else ""


def _exit_status(returncode: int) -> int:
    # A child killed by signal N reports -N; shells spell that 128+N.
    return 128 - returncode if returncode < 0 else returncode


class Bash(Tool):
    name: ClassVar[str] = "Bash"
    description: ClassVar[str] = (
        "Run a command with bash in the working directory and return its stdout, stderr and "
        "exit status. Each call starts a fresh shell (no state carries over). `timeout` is in "
        f"milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); on timeout "
        "the command and everything it started are killed. Long output keeps its beginning "
        "and end. Prefer Read, Glob, Grep, Edit and Write over cat, find, grep, sed and echo "
        "redirection for working with files. Quote paths that contain spaces."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command to run"},
            "timeout": {
                "type": "number",
                "description": f"Timeout in milliseconds (max {MAX_TIMEOUT_MS})",
            },
            "description": {
                "type": "string",
                "description": "A few words saying what the command does",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Run the command in the background and go on at once: the "
                "call returns a task id and the file its output goes to, and you are told when "
                "it ends. `timeout` then limits how long it may run (default 600000 ms, at "
                "most 7200000)",
            },
            "dangerouslyDisableSandbox": {
                "type": "boolean",
                "description": "Run this command outside the OS sandbox (where the sandbox "
                "is on). Only when the sandbox blocks something the task truly needs: the "
                "call then needs the user's approval",
            },
        },
        "required": ["command"],
    }
    kind: ClassVar[ToolKind] = "execute"
    rule_subject: ClassVar[Literal["paths", "command", "domain"]] = "command"

    def subject(self, tool_input: JSON) -> str:
        return str(tool_input.get("command", ""))

    def is_read_only(self, tool_input: JSON) -> bool:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return False
        from wisp.shell import analyse

        return analyse(command, cwd=os.getcwd(), env=os.environ).read_only

    def describe(self, tool_input: JSON) -> str:
        command = str(tool_input.get("command", ""))
        description = tool_input.get("description")
        if isinstance(description, str) and description.strip():
            return f"{description.strip()}: {command}"
        return command

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        command: str = tool_input["command"]
        limit_ms = timeout_ms(tool_input.get("timeout"), ctx.env)
        if ctx.abort.is_set():
            return ToolResult(
                content="Command was not run: the request was interrupted.",
                is_error=True,
                data={
                    "stdout": "",
                    "stderr": "",
                    "interrupted": True,
                    "isImage": False,
                    "noOutputExpected": False,
                },
            )
        launch = _sandboxed(tool_input, ctx)
        if isinstance(launch, ToolResult):
            return launch
        elsewhere = await _run_elsewhere(command, tool_input, ctx, launch, limit_ms)
        if elsewhere is not None:
            return elsewhere
        # Loaded on the first command: a session that never runs one does not pay for it.
        import subprocess

        from wisp.tools._bash_exec import run_supervised

        try:
            outcome = await run_supervised(
                launch.argv if launch else [_shell(), "-c", command],
                cwd=ctx.cwd,
                env=launch.env if launch else _env(ctx),
                timeout_s=limit_ms / 1000,
                stdout=CappedText(max_output_chars(ctx.env), spill=True),
                stderr=CappedText(max_output_chars(ctx.env), spill=True),
                abort=ctx.abort,
                registry=ctx.processes,
                confine=launch,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return ToolResult.error(f"Could not start the command: {exc}")
        finally:
            if launch is not None:
                launch.release()
        result = _present(command, outcome, limit_ms,
                          bool(tool_input.get("run_in_background")), max_output_chars(ctx.env))
        if launch is not None and ctx.sandbox is not None:
            from wisp.tools._bash_sandbox import with_violations

            result = with_violations(result, ctx.sandbox, command, launch, str(ctx.cwd))
        return result


async def _run_elsewhere(command: str, tool_input: JSON, ctx: ToolContext,
                         launch: Launch | None, limit_ms: int) -> ToolResult | None:
    """In the background, or in the editor's terminal (never for a call the sandbox
    holds: the editor's terminal is outside it); None: here, in the foreground."""
    if tool_input.get("run_in_background") is True and ctx.tasks is not None:
        return _start_background(command, tool_input, ctx, ctx.tasks, launch)
    if ctx.terminals is not None and launch is None:
        from wisp.tools._bash_terminal import run_in_editor

        return await run_in_editor(command, ctx, ctx.terminals, limit_ms)
    return None


def _env(ctx: ToolContext) -> dict[str, str]:
    return ctx.env if ctx.env is not None else dict(os.environ)


def _sandboxed(tool_input: JSON, ctx: ToolContext) -> Launch | ToolResult | None:
    """The sandboxed launch of this call, None when it runs outside the sandbox, or the
    refusal when the sandbox is on but cannot run here."""
    if ctx.sandbox is None or not ctx.sandbox.runs_sandboxed(tool_input):
        return None
    from wisp.tools._bash_sandbox import launch

    return launch(ctx.sandbox, [_shell(), "-c", tool_input["command"]], _env(ctx), ctx.cwd)


def _start_background(command: str, tool_input: JSON, ctx: ToolContext,
                      tasks: BackgroundTasks, launch: Launch | None) -> ToolResult:
    """`run_in_background`: the command starts in a session of its own, writing stdout and
    stderr to its output file, and the call returns at once with its task id."""
    import subprocess

    from wisp.tools.reaper import become_subreaper

    env = launch.env if launch else _env(ctx)
    argv = launch.argv if launch else [_shell(), "-c", command]

    def spawn(output: Path) -> subprocess.Popen[bytes]:
        become_subreaper()  # what it leaves running stays ours to end
        with open(output, "ab") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                cwd=ctx.cwd, env=env, start_new_session=True,
                pass_fds=launch.pass_fds if launch else (),
                preexec_fn=launch.preexec_fn if launch else None)  # noqa: PLW1509
        if launch is not None:
            from wisp.tools._bash_sandbox import release_when_done

            release_when_done(proc, launch)
        return proc

    description = tool_input.get("description")
    timeout = tool_input.get("timeout")
    try:
        task_id, output_file = tasks.start_command(
            spawn, description=description if isinstance(description, str) and description
            else command, tool_use_id=ctx.tool_use_id or "",
            timeout_ms=int(timeout) if isinstance(timeout, int | float)
            and not isinstance(timeout, bool) else None)
    except (OSError, subprocess.SubprocessError) as exc:
        if launch is not None:
            launch.release()
        return ToolResult.error(f"Could not start the command: {exc}")
    return ToolResult(
        content=f"Command running in background with ID: {task_id}. Its output (stdout and "
        f"stderr) is being written to {output_file}. You will be notified when it ends; "
        "to see its output so far, Read that file.",
        data={"stdout": "", "stderr": "", "interrupted": False, "isImage": False,
              "noOutputExpected": False, "backgroundTaskId": task_id})


def _present(command: str, outcome: Outcome, limit_ms: int, background: bool,
             limit: int) -> ToolResult:
    out = strip_trailing_newlines(outcome.stdout.segments())
    err = strip_trailing_newlines(outcome.stderr.segments())
    outcome.stdout.close()
    outcome.stderr.close()
    joiner: list[Segment] = ["\n"] if seg_len(out) and seg_len(err) else []
    # A huge output is clipped for the model; the file with all of it is named in the
    # marker, so the model (and the user) can still read any part of it.
    saved_in = outcome.stdout.spill_path or outcome.stderr.spill_path
    text, _ = clip([*out, *joiner, *err], limit, saved_in)
    notes: list[str] = []
    is_error = False
    data: JSON = {
        "stdout": clip(out, limit)[0],
        "stderr": clip(err, limit)[0],
        "interrupted": outcome.ending == "interrupted",
        "isImage": False,
        "noOutputExpected": False,
    }
    if outcome.ending == "timeout":
        notes.append(f"Command timed out after {limit_ms / 1000:g}s")
        is_error = True
    elif outcome.ending == "interrupted":
        notes.append("Command was interrupted before it finished.")
        is_error = True
    elif outcome.returncode:
        status = _exit_status(outcome.returncode)
        notes.append(f"Exit code {status}")
        is_error = True
        meaning = _INTERPRETATIONS.get((last_program(command), status))
        if meaning:
            data["returnCodeInterpretation"] = meaning
    if background:
        notes.append("Note: run_in_background is not available here; the command ran to "
                     "completion.")
    body = "\n".join(part for part in (text, *notes) if part)
    return ToolResult(content=body or "(no output)", is_error=is_error, data=data)
