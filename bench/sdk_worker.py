"""One measurement of `wisp.sdk`, run by `bench/sdk.py` in a fresh process; prints JSON.

A fresh process per measurement keeps the figures apart: the first query pays the
imports, RSS is this process's alone (the Messages API server is another process), and
one measurement's garbage cannot slow the next.

    python bench/sdk_worker.py first                      # import + first query()
    python bench/sdk_worker.py inprocess --reps 20 --turns 50
    python bench/sdk_worker.py concurrent --sessions 100
    python bench/sdk_worker.py memory --turns 10 1000
    python bench/sdk_worker.py subprocess --cli PATH --reps 10 --turns 5
    python bench/sdk_worker.py serve                      # the model, for all of the above

The environment says where the model is (ANTHROPIC_BASE_URL, set by bench/sdk.py).
Times are seconds (time.perf_counter), memory is MiB of VmRSS.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

JSON = dict[str, Any]
PROMPT = "hi"  # the bench server answers it with a short text reply, at once
TIMEOUT = 600.0  # a hung session must fail the run, not stall the bench


def rss_mb() -> float:
    """This process's resident set now (VmRSS), in MiB."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def check(messages: list[Any]) -> None:
    """A run counts only if it ended in one successful result."""
    results = [m for m in messages if type(m).__name__ == "ResultMessage"]
    if len(results) != 1 or results[0].is_error:
        raise RuntimeError(f"expected one successful result, got {messages[-3:]}")


# --- first: a fresh process's first query ----------------------------------------------------


async def first(args: argparse.Namespace) -> JSON:
    t_import = time.perf_counter()
    from wisp.sdk import ClaudeAgentOptions, query

    imported = time.perf_counter()
    messages = [m async for m in query(prompt=PROMPT, options=ClaudeAgentOptions(cwd=args.cwd))]
    done = time.perf_counter()
    check(messages)
    return {"import": imported - t_import, "first_query": done - t_import}


# --- inprocess: overhead beyond the model exchange --------------------------------------------


class Exchange:
    """The model's own time: the SDK's recorded HTTP requests replayed byte for byte (bar
    re-encoding the JSON body) to the same server by a minimal client, which reads the
    response to its end and parses nothing. A runtime cannot do less than this."""

    def __init__(self, base_url: str, recorded: list[Any]) -> None:
        rest = base_url.split("://", 1)[1].split("/", 1)[0]
        self.host, _, port = rest.partition(":")
        self.port = int(port or 80)
        self.raw = [self._encode(r) for r in recorded]
        self._conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    def _encode(self, request: Any) -> bytes:
        body = json.dumps(request.body, separators=(",", ":")).encode()
        skip = {"host", "content-length", "connection", "transfer-encoding"}
        lines = [f"{request.method} {request.path} HTTP/1.1",
                 f"host: {self.host}:{self.port}",
                 *(f"{k}: {v}" for k, v in request.headers.items() if k not in skip),
                 f"content-length: {len(body)}", "connection: keep-alive", "", ""]
        return "\r\n".join(lines).encode() + body

    async def time(self, keep_alive: bool) -> float:
        """One replay: on a kept-alive connection, or on a new one closed after."""
        t0 = time.perf_counter()
        if self._conn is None or not keep_alive:
            self._conn = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._conn
        for raw in self.raw:
            writer.write(raw)
            await writer.drain()
            await _read_response(reader)
        if not keep_alive:
            writer.close()
            self._conn = None
        return time.perf_counter() - t0


async def _read_response(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    headers = head.decode("latin-1").lower()
    if "transfer-encoding: chunked" in headers:
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            await reader.readexactly(size + 2)  # the chunk and its CRLF
            if size == 0:
                return
    length = next((int(line.split(":", 1)[1]) for line in headers.split("\r\n")
                   if line.startswith("content-length:")), 0)
    await reader.readexactly(length)


async def _recorded(sdk: Any, cwd: str, turns: int) -> tuple[list[Any], list[Any]]:
    """What the SDK sends for one `query()`, and for turn number `turns` of a client:
    the same options, pointed at a recording server in this process (also a warm-up)."""
    from wisp.testing import ScriptedServer, reply

    with ScriptedServer(default=reply.text("ok")) as recorder:
        options = sdk.ClaudeAgentOptions(cwd=cwd, env={"ANTHROPIC_BASE_URL": recorder.url})
        check([m async for m in sdk.query(prompt=PROMPT, options=options)])
        one_shot = [r for r in recorder.requests if r.body is not None]
        async with sdk.ClaudeSDKClient(options=options) as client:
            for i in range(turns):
                seen = len(recorder.requests)
                await client.query(f"{PROMPT} {i}")
                check([m async for m in client.receive_response()])
        turn = [r for r in recorder.requests[seen:] if r.body is not None]
    return one_shot, turn


async def inprocess(args: argparse.Namespace) -> JSON:
    from wisp import sdk

    base_url = os.environ["ANTHROPIC_BASE_URL"]
    # Turns are timed from turn 4 on; the exchange replays the body of a middle one.
    warm_turns = 3
    one_shot, turn = await _recorded(sdk, args.cwd, warm_turns + args.turns // 2 + 1)
    options = sdk.ClaudeAgentOptions(cwd=args.cwd)
    check([m async for m in sdk.query(prompt=PROMPT, options=options)])  # warm-up, real server

    query_exchange = Exchange(base_url, one_shot)
    await query_exchange.time(keep_alive=False)
    out: dict[str, list[float]] = {key: [] for key in (
        "query", "query_exchange", "query_cpu", "query_exchange_cpu", "connect", "disconnect",
        "turn", "turn_exchange", "turn_cpu", "turn_exchange_cpu")}
    for _ in range(args.reps):  # alternate, so drift hits both alike
        cpu = time.process_time()
        out["query_exchange"].append(await query_exchange.time(keep_alive=False))
        out["query_exchange_cpu"].append(time.process_time() - cpu)
        cpu, t0 = time.process_time(), time.perf_counter()
        messages = [m async for m in sdk.query(prompt=PROMPT, options=options)]
        out["query"].append(time.perf_counter() - t0)
        out["query_cpu"].append(time.process_time() - cpu)
        check(messages)

    for _ in range(args.reps):
        t0 = time.perf_counter()
        client = sdk.ClaudeSDKClient(options=options)
        await client.connect()
        out["connect"].append(time.perf_counter() - t0)
        await client.query(PROMPT)
        check([m async for m in client.receive_response()])
        t1 = time.perf_counter()
        await client.disconnect()
        out["disconnect"].append(time.perf_counter() - t1)

    turn_exchange = Exchange(base_url, turn)
    await turn_exchange.time(keep_alive=True)
    async with sdk.ClaudeSDKClient(options=options) as client:
        for i in range(warm_turns + args.turns):
            cpu = time.process_time()
            exchange = await turn_exchange.time(keep_alive=True)
            exchange_cpu = time.process_time() - cpu
            cpu, t0 = time.process_time(), time.perf_counter()
            await client.query(f"{PROMPT} {i}")
            messages = [m async for m in client.receive_response()]
            elapsed, turn_cpu = time.perf_counter() - t0, time.process_time() - cpu
            check(messages)
            if i >= warm_turns:
                out["turn"].append(elapsed)
                out["turn_cpu"].append(turn_cpu)
                out["turn_exchange"].append(exchange)
                out["turn_exchange_cpu"].append(exchange_cpu)
    return {**out, "query_requests": len(one_shot), "turn_requests": len(turn)}


# --- concurrent: many sessions in one process -------------------------------------------------


async def concurrent(args: argparse.Namespace) -> JSON:
    from wisp import sdk

    root = Path(args.cwd)
    options = sdk.ClaudeAgentOptions(cwd=args.cwd)
    check([m async for m in sdk.query(prompt=PROMPT, options=options)])  # imports, warm-up

    async def open_session(i: int) -> tuple[Any, bool]:
        folder = root / f"s{i:03d}"
        folder.mkdir(exist_ok=True)
        client = sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(cwd=str(folder)))
        await client.connect()
        await client.query(PROMPT)
        messages = [m async for m in client.receive_response()]
        ok = any(type(m).__name__ == "ResultMessage" and not m.is_error for m in messages)
        return client, ok

    first_client, ok = await open_session(0)
    rss_one = rss_mb()
    t0 = time.perf_counter()
    opened = await asyncio.gather(*(open_session(i) for i in range(1, args.sessions)))
    wall = time.perf_counter() - t0
    rss_all = rss_mb()
    clients = [first_client, *(c for c, _ in opened)]
    completed = int(ok) + sum(ok for _, ok in opened)
    t1 = time.perf_counter()
    await asyncio.gather(*(c.disconnect() for c in clients))
    close_all = time.perf_counter() - t1
    return {"sessions": args.sessions, "completed": completed, "wall": wall,
            "rss_one": rss_one, "rss_all": rss_all, "disconnect_all": close_all,
            "per_extra": (rss_all - rss_one) / max(1, args.sessions - 1)}


# --- memory: RSS with one session, and after many turns --------------------------------------


async def memory(args: argparse.Namespace) -> JSON:
    bare = rss_mb()
    from wisp import sdk

    marks: dict[str, float] = {"bare": bare}
    turn_times: list[float] = []
    async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(cwd=args.cwd)) as client:
        for i in range(1, max(args.turns) + 1):
            t0 = time.perf_counter()
            await client.query(f"{PROMPT} {i}")
            check([m async for m in client.receive_response()])
            turn_times.append(time.perf_counter() - t0)
            if i == 1:
                marks["one_session"] = rss_mb()
            if i in args.turns:
                marks[str(i)] = rss_mb()
    return {"rss": marks, "turn_first10": turn_times[:10], "turn_last10": turn_times[-10:]}


# --- subprocess: wisp.sdk and the official SDK driving the same CLI --------------------------


async def subprocess_transport(args: argparse.Namespace) -> JSON:
    import claude_agent_sdk as official

    import wisp.sdk as ours

    stderr: list[str] = []
    sdks = {"wisp.sdk": ours, "official": official}

    def options(sdk: Any) -> Any:
        return sdk.ClaudeAgentOptions(cli_path=args.cli, cwd=args.cwd, stderr=stderr.append)

    async def one_query(sdk: Any) -> float:
        t0 = time.perf_counter()
        messages = [m async for m in sdk.query(prompt=PROMPT, options=options(sdk))]
        elapsed = time.perf_counter() - t0  # the generator has closed the transport by now
        check(messages)
        return elapsed

    async def client_turns(sdk: Any) -> list[float]:
        times = []
        async with sdk.ClaudeSDKClient(options=options(sdk)) as client:
            for i in range(args.turns + 1):
                t0 = time.perf_counter()
                await client.query(f"{PROMPT} {i}")
                check([m async for m in client.receive_response()])
                times.append(time.perf_counter() - t0)
        return times[1:]  # the first turn also waits for the CLI to finish starting

    out: dict[str, JSON] = {name: {"query": [], "turn": []} for name in sdks}
    try:
        for sdk in sdks.values():  # warm-up: imports, page cache, the CLI's first-run files
            await one_query(sdk)
        for rep in range(args.reps):
            order = list(sdks.items()) if rep % 2 == 0 else list(sdks.items())[::-1]
            for name, sdk in order:  # ABBA: drift from other load hits both alike
                out[name]["query"].append(await one_query(sdk))
            for name, sdk in order:
                out[name]["turn"].extend(await client_turns(sdk))
    except Exception as exc:
        tail = "\n".join(stderr[-10:])
        raise RuntimeError(f"{type(exc).__name__}: {exc}\nCLI stderr:\n{tail}") from exc
    return out


# --- serve: the Messages API server, in its own process -----------------------------------


def serve() -> int:
    """Prints its URL, answers every request with a short text at once, and stops when
    stdin closes. As bench/serve.py, but counting requests instead of keeping them (1,000
    turns would keep every growing request body). ScriptedServer's listen backlog (128)
    takes 100 sessions connecting at once."""
    from wisp.testing import ScriptedServer, reply

    class CountingServer(ScriptedServer):
        count = 0

        def _record(self, request: Any) -> None:
            self.count += 1

    with CountingServer(default=reply.text("ok")) as server:
        print(server.url, flush=True)
        sys.stdin.read()
    return 0


MODES: dict[str, Callable[[argparse.Namespace], Any]] = {
    "first": first,
    "inprocess": inprocess,
    "concurrent": concurrent,
    "memory": memory,
    "subprocess": subprocess_transport,
}


def main() -> int:
    if sys.argv[1:] == ["serve"]:
        return serve()
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=sorted(MODES))
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--turns", type=int, nargs="+", default=[10])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--cli", help="the CLI the SDKs drive (subprocess mode)")
    args = parser.parse_args()
    if args.mode != "memory":
        args.turns = args.turns[0]
    try:
        out = asyncio.run(asyncio.wait_for(MODES[args.mode](args), TIMEOUT))
    except Exception as exc:
        sys.stderr.write(f"{args.mode} failed: {type(exc).__name__}: {exc}\n")
        return 1
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
