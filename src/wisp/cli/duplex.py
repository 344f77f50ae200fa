"""Entry for `--input-format stream-json`: the bidirectional SDK protocol."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from wisp.cli.options import Options
from wisp.tools.processes import GLOBAL_PROCESSES


def run_duplex(opts: Options) -> int:
    code = asyncio.run(_serve(opts))
    sys.stdout.flush()
    # The stdin thread may still be blocked in read(); leave without joining it.
    os._exit(code)


async def _serve(opts: Options) -> int:
    from wisp.duplex.server import DuplexServer

    server = DuplexServer(opts, dict(os.environ))
    loop = asyncio.get_running_loop()

    def on_term() -> None:
        # The SDKs send SIGTERM when they are done with us: stop tools and leave quietly.
        GLOBAL_PROCESSES.kill_all()
        sys.stdout.flush()
        os._exit(143)

    loop.add_signal_handler(signal.SIGTERM, on_term)
    loop.add_signal_handler(signal.SIGINT, server.interrupt)
    return await server.serve()
