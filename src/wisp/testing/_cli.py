"""`python -m wisp.testing.server`: the scripted server, to try wisp offline. Scripted
replies (from `--script FILE.json`) come first, then every request is answered with an
echo of the last user text. In the foreground it serves until Ctrl-C; given a command
after `--`, it serves that command only (`wisp.testing._run`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from wisp.argparsing import StrictParser
from wisp.ports import listen_failure
from wisp.testing import reply
from wisp.testing.reply import Reply
from wisp.testing.server import ScriptedServer

_BUILDERS: dict[str, Callable[..., Reply]] = {
    "text": reply.text,
    "tool_use": reply.tool_use,
    "tool_uses": reply.tool_uses,
    "thinking": reply.thinking,
    "message": reply.message,
    "max_tokens": reply.max_tokens,
    "error": reply.error,
    "slow": reply.slow,
    "cut": reply.cut,
    "malformed": reply.malformed,
    "sse_error": reply.sse_error,
    "echo": reply.echo,
}


def from_json(item: Any) -> Reply:
    """One script entry: `{"text": "hi"}`, `{"tool_use": {"name": "Bash", "input": {..}}}`,
    `{"error": {"status": 529, "message": ".."}}`, `{"cut": {"after_events": 3, "base": {..}}}`.
    The key names a `wisp.testing.reply` builder; an object value gives its keyword
    arguments, `true` calls it bare, anything else is its one positional argument."""
    if not isinstance(item, dict) or len(item) != 1:
        raise ValueError(f"a script entry is an object with exactly one key, got {item!r}")
    [(kind, value)] = item.items()
    builder = _BUILDERS.get(kind)
    if builder is None:
        raise ValueError(f"unknown reply kind {kind!r}; known: {', '.join(sorted(_BUILDERS))}")
    if kind == "cut" and isinstance(value, dict) and "base" in value:
        value = {**value, "base": from_json(value["base"])}
    if value is True or value is None:
        return builder()
    return builder(**value) if isinstance(value, dict) else builder(value)


def load_script(path: str) -> list[Reply]:
    entries = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise ValueError("a script file holds a JSON list of replies")
    return [from_json(entry) for entry in entries]


PROGRAM = "python -m wisp.testing.server"

_DESCRIPTION = """\
A scripted Anthropic Messages API (and Chat Completions API) server, to try wisp, or an
agent of yours, offline. Replies from --script come first, in order; every other request
is answered with an echo of its last user text."""

_EPILOG = """\
Without a command it serves until Ctrl-C on a free port (or --port), and prints its URL.
With a command after --, it starts on a free port, runs the command with
ANTHROPIC_BASE_URL and OPENAI_BASE_URL pointing at itself (ANTHROPIC_API_KEY and
OPENAI_API_KEY set to a dummy when unset), stops when the command ends, and exits
with the command's status. Requests are not logged then. A command installed beside this
Python (wisp in a virtual environment) runs even when its folder is not on PATH.

script entries: {"text": "hi"}, {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
  {"error": {"status": 529, "message": "overloaded"}}, {"echo": true}, ...

examples:
  python -m wisp.testing.server -- wisp -p hello
  python -m wisp.testing.server --script replies.json -- python my_agent.py
  python -m wisp.testing.server --port 8765"""


def _parser() -> StrictParser:
    usage = (f"{PROGRAM} [-h] [--host HOST] [--port PORT] [--script FILE.json] [--quiet]\n"
             f"       {' ' * len(PROGRAM)} [-- command ...]")
    parser = StrictParser(prog=PROGRAM, description=_DESCRIPTION, epilog=_EPILOG, usage=usage)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0,
                        help="default 0: a free port (printed at start)")
    parser.add_argument("--script", metavar="FILE.json", help="replies to serve in order")
    parser.add_argument("--quiet", action="store_true", help="do not log requests")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    own, command = _split(list(sys.argv[1:] if argv is None else argv))
    parser = _parser()
    args = parser.parse_strict(own)
    if command is not None and not command:
        parser.error("no command after --")
    try:
        replies = load_script(args.script) if args.script else []
    except (OSError, ValueError, TypeError) as exc:
        parser.error(f"--script {args.script}: {exc}")
    try:
        server = ScriptedServer(*replies, default=reply.echo(), host=args.host,
                                port=args.port, verbose=not (args.quiet or command))
    except OSError as exc:
        line = listen_failure(PROGRAM, args.host, args.port, exc)
        if line is None:
            raise
        sys.stderr.write(line + "\n")
        return 1
    with server:
        return _serve(server) if command is None else _run(server, command)


def _split(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """This program's own options, and the command after `--` (None without one)."""
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


def _serve(server: ScriptedServer) -> int:
    print(f"wisp.testing: Messages API listening on {server.url}", flush=True)
    print(f"  ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=test wisp -p hi", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    return 0


def _run(server: ScriptedServer, command: list[str]) -> int:
    from wisp.testing._run import run_command

    env = dict(os.environ)
    env.update(ANTHROPIC_BASE_URL=server.url, OPENAI_BASE_URL=server.openai_url)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env[key] = env.get(key) or "test"  # any key will do: the server checks none
    return run_command(_beside_python(command, env), env)


def _beside_python(command: list[str], env: dict[str, str]) -> list[str]:
    """`wisp` (or any script installed with this interpreter) runs even when its folder
    is not on PATH, as after `python -m venv .venv` without activating it."""
    name = command[0]
    if os.sep in name or shutil.which(name, path=env.get("PATH")) is not None:
        return command
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return [beside, *command[1:]] if os.access(beside, os.X_OK) else command
