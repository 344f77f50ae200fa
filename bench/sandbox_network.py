"""What the network jail adds to each sandboxed command: `bash -c true` without a
sandbox, in bubblewrap alone, with the seccomp program (no allowed domain: the
default), and with the bridge as well (allowed domains: perl listens, forks the relay,
installs the command's filter, execs).

    .venv/bin/python bench/sandbox_network.py [--n 200] [--json]

Runs are interleaved so machine noise lands on every variant alike; the figures are the
median and p95 of wall time around `subprocess.run`, in ms. The target of issue 24 is
≤ 10 ms for the whole sandbox per command. Also measured: the proxy's one-time start
(the first `jail()` of a session with allowed domains), and one curl request through
the sandbox, bridge and proxy against the same request made directly without a sandbox.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from wisp.sandbox.network import NetworkGate, NetworkJail, NetworkPolicy

BWRAP = ["--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
         "--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev",
         "--proc", "/proc"]
INNER = ["bash", "-c", "true"]


def _argv(jail: NetworkJail | None, inner: list[str]) -> tuple[list[str], tuple[int, ...]]:
    bwrap = shutil.which("bwrap") or "bwrap"
    if jail is None:
        return [bwrap, *BWRAP, "--unshare-net", "--", *inner], ()
    return [bwrap, *BWRAP, *jail.bwrap_args, "--", *jail.wrap(inner)], jail.pass_fds


def _once(jail: NetworkJail | None, inner: list[str]) -> float:
    argv, fds = _argv(jail, inner)
    env = {**os.environ, **(jail.env if jail is not None else {})}
    start = time.perf_counter()
    subprocess.run(argv, pass_fds=fds, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def _summary(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 2)}


async def _loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]  # the bench's own upstream; no DNS


def _upstream() -> int:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    port: int = server.getsockname()[1]
    return port


def run(n: int) -> dict[str, object]:
    folder = Path(tempfile.mkdtemp(prefix="wisp-bench-net-"))
    closed = NetworkGate(NetworkPolicy(()), runtime_dir=folder, on_violation=print)
    open_ = NetworkGate(NetworkPolicy(("bench.test",), allow_local_binding=True),
                        runtime_dir=folder, on_violation=print, resolver=_loopback)
    try:
        start = time.perf_counter()
        open_.jail()
        result: dict[str, object] = {"proxy_start_ms":
                                     round((time.perf_counter() - start) * 1000, 2)}
        result.update(_per_command(n, closed, open_))
        result.update(_one_request(max(n // 10, 5), open_))
    finally:
        closed.close()
        open_.close()
        shutil.rmtree(folder, ignore_errors=True)
    result["n"] = n
    result["cpus"] = os.cpu_count()
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]  # others' work skews it
    return result


def _per_command(n: int, closed: NetworkGate, open_: NetworkGate) -> dict[str, object]:
    variants = {"bwrap": lambda: None, "bwrap+seccomp": closed.jail,
                "bwrap+seccomp+bridge": open_.jail}
    samples: dict[str, list[float]] = {name: [] for name in ("no sandbox", *variants)}
    for _ in range(n):
        samples["no sandbox"].append(_timed(INNER))
        for name, jail in variants.items():
            samples[name].append(_once(jail(), INNER))
    return {name: _summary(s) for name, s in samples.items()}


def _one_request(n: int, open_: NetworkGate) -> dict[str, object]:
    port = _upstream()
    request = f"curl -s -o /dev/null http://bench.test:{port}/"
    # the direct request runs without a sandbox: inside one it has no route
    direct = f"curl -s -o /dev/null --noproxy '*' http://127.0.0.1:{port}/"
    through = [_once(open_.jail(), ["bash", "-c", request]) for _ in range(n)]
    plain = [_timed(["bash", "-c", direct]) for _ in range(n)]
    return {"curl_through_proxy_in_sandbox": _summary(through),
            "curl_direct_no_sandbox": _summary(plain)}


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.n)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for name, value in result.items():
        print(f"{name:34} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
