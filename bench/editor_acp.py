"""wisp in an editor, timed: `wisp acp` against Zed's adapter, side by side.

    .venv/bin/python bench/editor_acp.py [--n 5]

(Not `bench/acp.py`: that name would hide Zed's `acp` package from this script.)

The editor is Zed's Python client (`agent-client-protocol`); the model is one scripted
server on 127.0.0.1. Variants, alternated run by run because the machine is noisy:
- `wisp acp`: ACP spoken by wisp itself;
- `adapter → wisp`: Zed's adapter (tests/acp/adapter, `bash scripts/install-sdk-deps`)
  running `wisp` through `CLAUDE_CODE_EXECUTABLE`;
- `adapter → reference`: the same adapter running Claude Code, when the reference CLI is
  in .bench-cache/ (skipped otherwise).

Reported (medians, ms from just before spawn or just before the request): `initialize`
answered, `session/new` answered, first `agent_message_chunk` after `session/prompt`, and
the prompt's end. Then the in-process cost of turning one engine event into its
`session/update` line (`wisp.acp.updates` plus the JSON-RPC framing).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib.firstframe import ROOT, isolated_env, start_server
from benchlib.provenance import git_head, log
from tests.acp.editor import ADAPTER_JS, Editor, connect

REFERENCE = ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude"
WISP = str(Path(sys.executable).parent / "wisp")
KEYS = ("initialize", "session/new", "first chunk", "prompt end")


def variants() -> dict[str, tuple[list[str], dict[str, str]]]:
    found: dict[str, tuple[list[str], dict[str, str]]] = {"wisp acp": ([WISP, "acp"], {})}
    node = shutil.which("node")
    if node and ADAPTER_JS.exists():
        found["adapter → wisp"] = ([node, str(ADAPTER_JS)], {"CLAUDE_CODE_EXECUTABLE": WISP})
        if REFERENCE.exists():
            found["adapter → reference"] = ([node, str(ADAPTER_JS)], {
                "CLAUDE_CODE_EXECUTABLE": str(REFERENCE),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                # The adapter passes --allow-dangerously-skip-permissions, which the
                # reference refuses as root ("cannot be used with root/sudo privileges")
                # unless it is told it runs in a sandbox; CI machines run as root.
                "IS_SANDBOX": "1"})
    return found


async def one_run(command: list[str], env: dict[str, str], work: Path) -> dict[str, float]:
    editor = Editor()
    first = asyncio.get_running_loop().create_future()
    editor.on_update = lambda u: (not first.done() and u.get(
        "sessionUpdate") == "agent_message_chunk" and first.set_result(time.perf_counter()))
    started = time.perf_counter()
    async with connect(command, editor, env, work) as (conn, _):
        ready = time.perf_counter()
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        made = time.perf_counter()
        from acp import text_block

        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        ended = time.perf_counter()
    return {"initialize": (ready - started) * 1000, "session/new": (made - ready) * 1000,
            "first chunk": (await first - made) * 1000, "prompt end": (ended - made) * 1000}


def per_update_us(n: int = 20_000) -> float:
    """One streamed text delta through the projection and the framing, in microseconds."""
    from wisp.acp.rpc import Peer
    from wisp.acp.updates import UpdateProjection
    from wisp.engine.events import StreamDelta

    async def nothing(method: str, params: dict[str, Any]) -> None:
        return None

    sink: list[bytes] = []
    peer = Peer(sink.append, nothing, nothing)
    projection = UpdateProjection(
        lambda u: peer.notify("session/update", {"sessionId": "s", "update": u}), "/tmp")
    event = StreamDelta({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "text_delta", "text": "a few words "}}, "m")
    started = time.perf_counter()
    for _ in range(n):
        projection.emit(event)
    return (time.perf_counter() - started) / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5)
    args = parser.parse_args()
    server, url = start_server()
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in variants()}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.n + 1):  # the first round warms caches and is dropped
                order = list(samples) if i % 2 == 0 else list(reversed(samples))
                for name in order:
                    command, extra = variants()[name]
                    home, work = Path(tmp) / f"h{i}{name}", Path(tmp) / f"w{i}{name}"
                    home.mkdir()
                    work.mkdir()
                    env = {**isolated_env(url, home, ROOT / "src"), **extra}
                    run = asyncio.run(one_run(command, env, work))
                    if i:
                        samples[name].append(run)
    finally:
        server.kill()
    report(samples, args.n)
    return 0


def report(samples: dict[str, list[dict[str, float]]], n: int) -> None:
    names = list(samples)
    print(f"ACP, {n} runs each, medians in ms ({git_head()}); reference: "
          f"{'present' if REFERENCE.exists() else 'absent'}\n")
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key in KEYS:
        cells = [f"{statistics.median(r[key] for r in samples[name]):.0f}" for name in names]
        print(f"| {key} | " + " | ".join(cells) + " |")
    print(f"\nper update, engine event → session/update line: {per_update_us():.1f} µs")
    log(f"acp bench: {len(names)} variants x {n}")


if __name__ == "__main__":
    raise SystemExit(main())
