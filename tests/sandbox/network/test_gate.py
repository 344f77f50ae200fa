"""The gate's life: nothing starts without an allowed domain, the proxy starts on the
first jail that needs it and is gone after `close()` or the interpreter's exit, each
command's seccomp descriptor is closed once used, and the bridge leaves nothing behind
in the command's view or on the host."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.sandbox.network.conftest import Gates
from tests.sandbox.network.helpers import Jailer, Upstream
from wisp.sandbox import bridge
from wisp.sandbox.network import NetworkGate, NetworkPolicy


def _proxy_threads() -> int:
    return sum(t.name == "wisp-egress-proxy" for t in threading.enumerate())


def test_no_allowed_domain_starts_nothing_and_gives_no_egress(
        gates: Gates, jailer: Jailer, upstream: Upstream) -> None:
    before = _proxy_threads()
    gate = gates()
    jail = gate.jail()
    assert jail.bwrap_args[:1] == ("--unshare-net",) and "--seccomp" in jail.bwrap_args
    assert dict(jail.env) == {} and jail.wrap(["a", "b"]) == ["a", "b"]
    assert gate.egress == "none" and _proxy_threads() == before
    assert not gates.runtime_dir.exists()
    done = jailer.run(jail, f"curl -sS --max-time 5 http://127.0.0.1:{upstream.port}/")
    assert done.returncode != 0 and upstream.heads == []


def test_the_proxy_starts_on_first_need_and_close_removes_it(gates: Gates) -> None:
    before = _proxy_threads()
    gate = gates("allowed.test")
    assert _proxy_threads() == before and not gates.runtime_dir.exists()  # lazily
    jail = gate.jail()
    folder = Path(jail.bwrap_args[jail.bwrap_args.index(bridge.MOUNT) - 1])
    assert folder.parent == gates.runtime_dir
    assert (folder / "proxy.sock").is_socket()
    assert folder.stat().st_mode & 0o777 == 0o700
    assert _proxy_threads() == before + 1 and gate.egress == "proxy"
    gate.jail()
    assert _proxy_threads() == before + 1  # reused
    gate.close()
    assert not folder.exists() and _proxy_threads() == before
    gate.close()  # idempotent
    with pytest.raises(RuntimeError):
        gate.jail()


EXITING = """
import sys
from pathlib import Path
from wisp.sandbox.network import NetworkGate, NetworkPolicy
gate = NetworkGate(NetworkPolicy(("allowed.test",)), runtime_dir=Path(sys.argv[1]),
                   on_violation=print)
jail = gate.jail()
print(jail.bwrap_args[jail.bwrap_args.index("/dev/wisp-net") - 1])
"""


def test_the_proxy_is_removed_at_the_interpreters_exit(tmp_path: Path, perl_path: str) -> None:
    done = subprocess.run([sys.executable, "-c", EXITING, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, check=True)
    folder = Path(done.stdout.strip())
    assert folder.parent == tmp_path and not folder.exists()
    assert list(tmp_path.iterdir()) == []


def test_each_commands_seccomp_descriptor_is_closed_once_used(
        gates: Gates, jailer: Jailer) -> None:
    gate = gates()
    jailer.run(gate.jail(), "true")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(15):
        assert jailer.run(gate.jail(), "true").returncode == 0
    assert len(os.listdir("/proc/self/fd")) <= before + 1  # at most the last one, unread
    unused = gate.jail()  # never started: kept (a command may still start with it)
    assert os.read(os.dup(unused.pass_fds[0]), 8)  # still holds its program
    gate.close()
    with pytest.raises(OSError):
        os.fstat(unused.pass_fds[0])


RELAY = """
ls /proc/self/fd
# The relay starts beside the command: on a loaded machine it may not be there yet, so
# look for it for up to 10 s instead of once.
for try in $(seq 100); do
  for stat in /proc/[0-9]*/stat; do
    read -r pid comm state ppid rest < "$stat" 2>/dev/null || continue
    [ "$ppid" = $$ ] && [ "$comm" = "(perl)" ] && relay=$pid
  done
  [ -n "$relay" ] && break
  sleep 0.1
done
echo "relay ${relay:-none}"
cat /proc/$$/environ > /dev/null && echo "own environ readable"
cat /proc/$relay/environ > /dev/null 2>&1 && echo "relay environ readable"
cat /proc/$relay/mem > /dev/null 2>&1 && echo "relay memory readable"
true
"""


def test_the_command_sees_no_extra_descriptor_and_cannot_read_the_relay(
        gates: Gates, jailer: Jailer) -> None:
    done = jailer.run(gates("allowed.test").jail(), RELAY)
    lines = done.stdout.splitlines()
    assert lines[:4] == ["0", "1", "2", "3"], done.stdout  # 3: the folder ls is reading
    assert lines[4].startswith("relay ") and lines[4] != "relay none", done.stdout
    assert lines[5:] == ["own environ readable"], done.stdout


def test_no_bridge_process_outlives_its_command(gates: Gates, jailer: Jailer) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    gate = gates("allowed.test")
    done = jailer.run(gate.jail(), f": {marker}; grep -a -l {marker} /proc/[0-9]*/cmdline")
    assert len(done.stdout.split()) >= 3  # bubblewrap's init, the command, its relay
    # The kernel ends the namespace's other processes once its init exits; under load that
    # takes a moment after bwrap returns, so allow a short grace, never a lasting one.
    deadline = time.monotonic() + 2
    while (left := _running_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert left == []


def _running_with(marker: str) -> list[str]:
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                left.append(pid)
        except OSError:
            continue
    return left


def test_without_perl_there_is_no_egress_rather_than_a_weaker_filter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    gate = NetworkGate(NetworkPolicy(("allowed.test",)), runtime_dir=tmp_path / "run",
                       on_violation=print)
    try:
        jail = gate.jail()
        assert gate.egress.startswith("unavailable: perl")
        assert dict(jail.env) == {} and jail.bwrap_args[0] == "--unshare-net"
        assert not (tmp_path / "run").exists()
    finally:
        gate.close()


HOLD_TUNNEL = """
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=60)
s.sendall(f"CONNECT allowed.test:{sys.argv[1]} HTTP/1.1\\r\\n\\r\\n".encode())
print(s.recv(100).split(b"\\r\\n")[0].decode(), flush=True)
print("closed" if s.recv(100) == b"" else "data", flush=True)
"""


def test_close_ends_open_tunnels(gates: Gates, jailer: Jailer, upstream: Upstream) -> None:
    gate = gates("allowed.test", allow_local_binding=True)
    jail = gate.jail()
    argv = jailer.argv(jail, [sys.executable, "-I", "-c", HOLD_TUNNEL, str(upstream.port)])
    with subprocess.Popen(argv, pass_fds=jail.pass_fds, stdout=subprocess.PIPE,
                          text=True) as command:
        assert command.stdout is not None
        assert command.stdout.readline() == "HTTP/1.1 200 Connection established\n"
        started = time.monotonic()
        gate.close()
        assert time.monotonic() - started < 5
        assert command.stdout.readline() == "closed\n"
        assert command.wait(timeout=30) == 0
