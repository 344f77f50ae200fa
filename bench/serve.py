"""The bench's Messages API server, run as its own process.

A separate process keeps the server's request handling (JSON parsing of 50 KB reference
bodies, SSE writing) off the GIL of the runner, which stamps the CLIs' stdout lines.
Prints its URL on one line, then serves until stdin closes (so it dies with the runner).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.router import route

from wisp.testing import ScriptedServer, reply
from wisp.testing.server import RecordedRequest


class _CountingServer(ScriptedServer):
    """Counts requests instead of keeping them: a 1,000-turn reference session sends
    hundreds of MB of request bodies, which the default recording would hold in memory."""

    count = 0

    def _record(self, request: RecordedRequest) -> None:
        self.count += 1


def main() -> int:
    with _CountingServer(default=reply.dynamic(route)) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # EOF: the runner has finished or died
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
