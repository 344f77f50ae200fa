"""Answers `initialize` before the engine is imported.

Both SDKs send `initialize` first and wait for its answer (Python blocks its whole
`query()` on it), while importing asyncio and the engine costs several times what the
answer needs. So the duplex entry reads the first stdin line itself, and when it is an
`initialize` whose answer can be known now, writes that answer at once. The request is
then applied to the session before any later frame runs, exactly as the regular handler
would, so the answer stays true.

Not taken when session flags (`--resume`, `--continue`, `--session-id`) are present: their
errors must reach the SDK instead of a success answer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from wisp.control.stdin import CHUNK, parse_line
from wisp.duplex.init_answer import answer, applied_flags, commands
from wisp.jsonsafe import encode_utf8
from wisp.jsontypes import JSON
from wisp.launch.startup import api_key_source, effective_mode
from wisp.wire.protocol import INITIALIZE
from wisp.wire.writer import dumps

if TYPE_CHECKING:
    from wisp.launch.options import Options
    from wisp.project.context import ProjectContext
    from wisp.settings.loader import Settings



class EarlyStart(NamedTuple):
    """What was read from stdin before the event loop: `pending` still has to be parsed
    (numbered from `first_line`); `initialize` was answered and must still be applied.
    (A NamedTuple: this module runs before the initialize answer, where importing
    `dataclasses` would cost more than the answer itself.)"""

    pending: bytes = b""
    first_line: int = 1
    eof: bool = False
    initialize: JSON | None = None


def read_first_line(fd: int = 0) -> tuple[bytes, bool]:
    """Reads until the first newline (or EOF). Returns the bytes read and whether EOF came."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            return data, True
        data += chunk
    return data, False


def begin(opts: Options, env: Mapping[str, str], settings: Settings, fd: int = 0, *,
          project: ProjectContext | None = None) -> EarlyStart:
    flags = opts.runtime
    if flags.resume is not None or flags.continue_session or flags.session_id is not None:
        return EarlyStart()
    try:
        data, eof = read_first_line(fd)
    except OSError:
        return EarlyStart(eof=True)
    line, _, rest = data.partition(b"\n")
    parsed = parse_line(1, line)
    frame = parsed.frame if parsed is not None else None
    request = frame.get("request") if frame is not None else None
    if (
        frame is None
        or frame.get("type") != "control_request"
        or not isinstance(request, dict)
        or request.get("subtype") != "initialize"
        or "jsonSchema" in request  # must be validated first: it may earn an error answer
        or INITIALIZE.problem(request) is not None  # answered with its error by the handler
    ):
        return EarlyStart(pending=data, eof=eof)
    agents = request.get("agents")
    body = answer(
        env=env,
        agents=agents if isinstance(agents, dict) else {},
        api_key_source=api_key_source(env),
        permission_mode=effective_mode(opts.runtime, settings),
        session_state="idle",
        applied=applied_flags(request),
        commands=commands(opts.runtime.cwd, env, project),
        project=project,
    )
    response = {"subtype": "success", "request_id": frame.get("request_id"), "response": body}
    line_out = dumps({"type": "control_response", "response": response})
    sys.stdout.buffer.write(encode_utf8(line_out) + b"\n")
    sys.stdout.buffer.flush()
    return EarlyStart(pending=rest, first_line=2, eof=eof, initialize=request)
