"""Bash in an editor's terminal: the command runs where the user watches it (`wisp acp`
with a client that offers terminals), and its result reads as a local run's would.

Above: `Bash.run`, only for a call the OS sandbox does not hold. Below: the front end's
`EditorTerminals`.
"""

from __future__ import annotations

from wisp.tools.base import JSON, ToolContext, ToolResult
from wisp.tools.editor_files import EditorTerminals


async def run_in_editor(command: str, ctx: ToolContext, terminals: EditorTerminals,
                        limit_ms: int) -> ToolResult:
    try:
        run = await terminals.run(command, ctx.cwd, limit_ms / 1000, ctx.abort,
                                  ctx.tool_use_id)
    except OSError as exc:
        return ToolResult.error(f"Could not start the command in the editor: {exc}")
    notes: list[str] = []
    if run.truncated:
        notes.append("(The editor kept only the end of the output.)")
    if run.ending == "timeout":
        notes.append(f"Command timed out after {limit_ms / 1000:g}s")
    elif run.ending == "interrupted":
        notes.append("Command was interrupted before it finished.")
    elif run.signal:
        notes.append(f"Killed by signal {run.signal}")
    elif run.exit_code:
        notes.append(f"Exit code {run.exit_code}")
    output = run.output.rstrip("\n")
    data: JSON = {"stdout": output, "stderr": "", "interrupted": run.ending == "interrupted",
                  "isImage": False, "noOutputExpected": False}
    body = "\n".join(part for part in (output, *notes) if part)
    failed = run.ending != "exited" or bool(run.signal) or bool(run.exit_code)
    return ToolResult(content=body or "(no output)", is_error=failed, data=data)
