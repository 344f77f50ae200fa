"""Where a turn's CPU goes: the runtime alone against the same turn through wisp.sdk.

Runs one `Runtime` (events rendered to frames and dropped) and one in-process
`ClaudeSDKClient` side by side in one process, against the bench's scripted server in its
own process, alternating blocks of turns, and prints the median CPU time per turn of each
and their difference: what the SDK layer (the duplex front end, the frame copies, the
control protocol and the message types) adds to the engine's own work. CPU time, because
this machine's wall times swing with other work.

    .venv/bin/python bench/sdk_layers.py [--blocks 8] [--turns 25]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


class _Dropped:
    """A frame sink that keeps nothing: the runtime's frames are built, then dropped."""

    def write(self, frame: dict[str, Any]) -> None:
        pass


async def measure(url: str, blocks: int, turns: int) -> tuple[float, float]:
    from wisp.runtime.config import RuntimeConfig
    from wisp.runtime.runtime import Runtime
    from wisp.sdk import ClaudeAgentOptions, ClaudeSDKClient
    from wisp.wire.projection import StreamJson

    folder = Path(tempfile.mkdtemp(prefix="wisp-layers-"))
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-bench", "HOME": str(folder),
           "WISP_CONFIG_DIR": str(folder / ".wisp")}
    runtime = Runtime.open(RuntimeConfig(cwd=folder, env={**os.environ, **env},
                                         system_prompt=""),
                           StreamJson(_Dropped(), session_id=""))
    alone: list[float] = []
    through_sdk: list[float] = []
    async with ClaudeSDKClient(ClaudeAgentOptions(cwd=str(folder), env=env)) as client:

        async def sdk_turn() -> None:
            await client.query("hi")
            async for _ in client.receive_response():
                pass

        for _ in range(5):  # warm-up
            await runtime.run_prompt("hi")
            await sdk_turn()
        for _ in range(blocks):
            started = time.process_time()
            for _ in range(turns):
                await runtime.run_prompt("hi")
            alone.append((time.process_time() - started) / turns)
            started = time.process_time()
            for _ in range(turns):
                await sdk_turn()
            through_sdk.append((time.process_time() - started) / turns)
    await runtime.aclose()
    return statistics.median(alone) * 1000, statistics.median(through_sdk) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--turns", type=int, default=25)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(BENCH / "sdk_worker.py"), "serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        alone, through_sdk = asyncio.run(measure(url, args.blocks, args.turns))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    print("| CPU per turn | median |")
    print("|---|---|")
    print(f"| runtime alone (Runtime.run_prompt, frames built and dropped) | {alone:.2f} ms |")
    print(f"| the same turn through wisp.sdk in-process | {through_sdk:.2f} ms |")
    print(f"| what the SDK layer adds | {through_sdk - alone:.2f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
