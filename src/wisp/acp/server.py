"""`wisp acp`: the Agent Client Protocol over stdin/stdout, for editors (Zed, JetBrains
IDEs, Neovim and Emacs plugins).

Above: the editor, which starts this process and speaks newline-delimited JSON-RPC on
its pipes. Below: `wisp.acp.agent` and the runtimes of the sessions it opens, all in
this one process. When stdin ends (the editor quit or crashed) or a signal comes, every
running turn is interrupted, its processes are killed, and each session's transcript is
closed complete before the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

from wisp.acp.agent import AcpAgent
from wisp.acp.rpc import Peer

LINE_LIMIT = 64 * 1024 * 1024  # a prompt with images is one line


def _write(data: bytes) -> None:
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


async def serve(env: dict[str, str]) -> int:
    agent = AcpAgent(env)
    peer = agent.peer = Peer(_write, agent.handle, agent.notified)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    reading = asyncio.ensure_future(_read(reader, peer))
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    reading.cancel()
    stopping.cancel()
    peer.close()  # requests to the editor fail now: a permission prompt is a refusal
    await agent.aclose()
    await peer.drain()
    return 0


async def _read(reader: asyncio.StreamReader, peer: Peer) -> None:
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # a line past the limit: skip to its end, answer an error
            await _skip_line(reader)
            peer.feed(b"\x00")
            continue
        if not line:
            return
        peer.feed(line)


async def _skip_line(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(asyncio.LimitOverrunError, ValueError):
        await reader.readuntil(b"\n")


def run_acp(argv: list[str]) -> int:
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(HELP)
        return 0
    if argv:
        sys.stderr.write(f"wisp acp: unknown argument {argv[0]!r} (see wisp acp --help)\n")
        return 1
    return asyncio.run(serve(dict(os.environ)))


HELP = """\
Usage: wisp acp

Speaks the Agent Client Protocol on stdin/stdout, for editors: point the editor's agent
setting at `wisp acp` (see docs/acp.md). Sessions are wisp sessions: one started in the
editor resumes in the terminal (wisp --resume <id>), and the other way round.
"""
