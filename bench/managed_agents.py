"""`wisp serve` under load, against the scripted model server, over real HTTP.

    .venv/bin/python bench/managed_agents.py [--turns 30] [--sessions 200] [--subscribers 50]
        [--store postgresql://… [--split]]

`--store postgresql://…` runs the service on PostgreSQL, turns as DBOS workflows; with
`--split`, as one `--role api` and one `--role worker` process (RSS is the worker's). The
database should be empty: the bench creates its resources under its own key.

Reported:
- overhead: from `POST /v1/sessions/{id}/events` to the first `agent.message` on an open
  stream, minus the model's own time for the same reply (the scripted server answering
  the same request directly, measured in the same run, interleaved). First turns of new
  sessions and later turns of warm ones separately.
- concurrency: `--sessions` sessions each sent one message at once; time until every one
  is idle, and the server's RSS.
- fan-out: `--subscribers` streams on one session; how long after the first subscriber
  the last one sees the `agent.message`.
- memory per idle session: the server's RSS growth per session that ran one turn.

There is no reference to compare with (Claude Code has no session service); the model's
own time, measured alongside, is the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
KEY = "bench-key"
JSON = dict[str, Any]
HEADERS = {"x-api-key": KEY, "anthropic-beta": "managed-agents-2026-04-01"}


def start_model() -> tuple[subprocess.Popen[str], str]:
    code = ("import sys\nfrom wisp.testing import ScriptedServer, reply\n"
            "s = ScriptedServer(default=reply.text('the answer'))\n"
            "print(s.url, flush=True)\nsys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def start_serve(tmp: Path, model_url: str, store: str, role: str = "all"
                ) -> tuple[subprocess.Popen[str], str]:
    """A `wisp serve` process; its URL ("" for a worker)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "WISP_", "CLAUDE_"))}
    env.update({"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-bench",
                "WISP_SERVE_API_KEYS": KEY, "HOME": str(tmp), "WISP_CONFIG_DIR": str(tmp)})
    proc = subprocess.Popen([sys.executable, "-m", "wisp", "serve", "--port", "0",
                             "--store", store, "--role", role, "--data-dir", str(tmp)],
                            env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.rsplit(" ", 1)[1].strip() if "listening" in line else ""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Api:
    def __init__(self, client: httpx2.AsyncClient) -> None:
        self.client = client

    async def post(self, path: str, body: JSON) -> JSON:
        response = await self.client.post(path, json=body, headers=HEADERS)
        response.raise_for_status()
        data: JSON = response.json()
        return data

    async def setup(self) -> tuple[str, str]:
        agent = await self.post("/v1/agents", {"name": "bench", "model": "claude-sonnet-4-5",
                                               "tools": [{"type": "agent_toolset_20260401"}]})
        env = await self.post("/v1/environments", {"name": "bench",
                                                   "config": {"type": "cloud"}})
        return agent["id"], env["id"]

    async def session(self, agent: str, env: str) -> str:
        doc = await self.post("/v1/sessions", {"agent": agent, "environment_id": env})
        return str(doc["id"])

    async def send(self, session: str, text: str) -> None:
        await self.post(f"/v1/sessions/{session}/events", {"events": [{
            "type": "user.message", "content": [{"type": "text", "text": text}]}]})


async def until(lines: Any, kind: str) -> float:
    """Reads SSE lines (one iterator per stream) until an event of `kind`; the moment it
    arrived."""
    async for line in lines:
        if line == f"event: {kind}":
            return time.perf_counter()
    raise RuntimeError("the stream ended")


async def one_turn(api: Api, session: str, text: str) -> float:
    """Seconds from the send to the first agent.message on an open stream."""
    async with api.client.stream("GET", f"/v1/sessions/{session}/events/stream",
                                 headers=HEADERS, timeout=30) as stream:
        lines = stream.aiter_lines()
        started = time.perf_counter()
        await api.send(session, text)
        arrived = await until(lines, "agent.message")
        await until(lines, "session.status_idle")
    return arrived - started


async def model_time(model_url: str, client: httpx2.AsyncClient) -> float:
    """The scripted server's own time for one reply, start to end of stream."""
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}
    started = time.perf_counter()
    async with client.stream("POST", f"{model_url}/v1/messages", json=body,
                             headers={"x-api-key": "sk", "anthropic-version": "2023-06-01"}
                             ) as response:
        async for _ in response.aiter_bytes():
            pass
    return time.perf_counter() - started


async def overhead(api: Api, model_url: str, turns: int) -> JSON:
    agent, env = await api.setup()
    await one_turn(api, await api.session(agent, env), "warm up")
    warm_session = await api.session(agent, env)
    await one_turn(api, warm_session, "warm up")
    first, warm, model = [], [], []
    async with httpx2.AsyncClient() as direct:
        for i in range(turns):
            model.append(await model_time(model_url, direct))
            first.append(await one_turn(api, await api.session(agent, env), f"first {i}"))
            warm.append(await one_turn(api, warm_session, f"again {i}"))
    base = statistics.median(model)
    return {"model_ms": base * 1000,
            "first_turn_overhead_ms": (statistics.median(first) - base) * 1000,
            "warm_turn_overhead_ms": (statistics.median(warm) - base) * 1000}


async def concurrency(api: Api, sessions: int, pid: int) -> JSON:
    agent, env = await api.setup()
    ids = await asyncio.gather(*(api.session(agent, env) for _ in range(sessions)))
    before = rss_mb(pid)
    started = time.perf_counter()
    await asyncio.gather(*(api.send(s, "go") for s in ids))
    pending = set(ids)
    while pending:
        await asyncio.sleep(0.05)
        checked = await asyncio.gather(*(api.client.get(f"/v1/sessions/{s}", headers=HEADERS)
                                         for s in pending))
        pending = {r.json()["id"] for r in checked if r.json()["status"] != "idle"
                   or not r.json()["usage"]["output_tokens"]}
    elapsed = time.perf_counter() - started
    after = rss_mb(pid)
    return {"sessions": sessions, "all_idle_s": elapsed, "rss_before_mb": before,
            "rss_after_mb": after, "per_idle_session_kb": (after - before) * 1024 / sessions}


async def fanout(api: Api, subscribers: int) -> JSON:
    agent, env = await api.setup()
    session = await api.session(agent, env)
    streams = [api.client.stream("GET", f"/v1/sessions/{session}/events/stream",
                                 headers=HEADERS, timeout=60) for _ in range(subscribers)]
    opened = [await s.__aenter__() for s in streams]
    try:
        waits = [asyncio.ensure_future(until(s.aiter_lines(), "agent.message"))
                 for s in opened]
        await asyncio.sleep(0.2)
        await api.send(session, "to everyone")
        arrivals = sorted(await asyncio.gather(*waits))
    finally:
        for stream in streams:
            await stream.__aexit__(None, None, None)
    return {"subscribers": subscribers,
            "spread_ms": (arrivals[-1] - arrivals[0]) * 1000,
            "p50_after_first_ms": (arrivals[len(arrivals) // 2] - arrivals[0]) * 1000}


async def main_async(args: argparse.Namespace) -> JSON:
    model, model_url = start_model()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or f"sqlite:{Path(tmp) / 'bench.db'}"
        procs = []
        if args.split:
            procs.append(start_serve(Path(tmp), model_url, store, "worker")[0])
        serve, url = start_serve(Path(tmp), model_url, store, "api" if args.split else "all")
        procs.append(serve)
        try:
            limits = httpx2.Limits(max_connections=400, max_keepalive_connections=400)
            async with httpx2.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
                api = Api(client)
                return {"overhead": await overhead(api, model_url, args.turns),
                        "fanout": await fanout(api, args.subscribers),
                        "concurrency": await concurrency(api, args.sessions, procs[0].pid)}
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(30)
            model.stdin.close()  # type: ignore[union-attr]
            model.wait()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--store", default=None, help="postgresql://… (default: SQLite)")
    parser.add_argument("--split", action="store_true",
                        help="one api and one worker process (needs --store postgresql://)")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
