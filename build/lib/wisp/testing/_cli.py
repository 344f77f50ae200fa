"""`python -m wisp.testing.server`: the scripted server in the foreground, to try wisp
offline. Scripted replies (from `--script FILE.json`) come first, then every request is
answered with an echo of the last user text."""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wisp.testing.server",
        description="A scripted Anthropic Messages API server for trying wisp offline.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--script", metavar="FILE.json", help="replies to serve in order")
    parser.add_argument("--quiet", action="store_true", help="do not log requests")
    args = parser.parse_args(argv)
    try:
        replies = load_script(args.script) if args.script else []
    except (OSError, ValueError, TypeError) as exc:
        parser.error(f"--script {args.script}: {exc}")
    server = ScriptedServer(
        *replies, default=reply.echo(), host=args.host, port=args.port, verbose=not args.quiet
    )
    with server:
        print(f"wisp.testing: Messages API listening on {server.url}", flush=True)
        print(f"  ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=test wisp -p hi", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0
