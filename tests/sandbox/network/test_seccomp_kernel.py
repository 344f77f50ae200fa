"""The seccomp program on this machine's kernel, inside bubblewrap: each refusal is
checked against the same command in the same bubblewrap without the program (the
control), so a test cannot pass because the call fails anyway."""

from __future__ import annotations

import ctypes
import os
import platform
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.network.conftest import Gates
from tests.sandbox.network.helpers import Jailer, Upstream
from wisp.sandbox.network import NetworkJail, seccomp_program

PY = [sys.executable, "-I", "-c"]
PROBE = r"""
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def outcome(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
what = sys.argv[1]
if what == "unix":
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[2])
        print("ok", s.recv(100).decode())
    except OSError as e:
        print(errno.errorcode[e.errno])
elif what == "families":
    for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_UNIX):
        kind = socket.SOCK_RAW if family == socket.AF_NETLINK else socket.SOCK_STREAM
        try:
            socket.socket(family, kind).close()
            print(family.name, "ok")
        except OSError as e:
            print(family.name, errno.errorcode[e.errno])
    a, b = socket.socketpair()
    print("socketpair ok")
elif what == "vsock":
    try:
        socket.socket(40, socket.SOCK_STREAM)
        print("ok")
    except OSError as e:
        print(errno.errorcode[e.errno])
elif what == "io_uring_setup":
    print(outcome(libc.syscall(425, 1, None)))
elif what == "ptrace":
    print(outcome(libc.ptrace(0, 0, None, None)))  # PTRACE_TRACEME
elif what == "clone3":
    print(outcome(libc.syscall(435, None, 0)))
elif what == "unshare_user":
    print(outcome(libc.unshare(0x10000000)))
elif what == "x32":
    print(outcome(libc.syscall(0x40000000 | 39)))  # x32 getpid
elif what == "i386":
    import mmap
    code = bytes.fromhex("b814000000" "cd80" "c3")  # mov eax, 20 (getpid); int 0x80; ret
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    print("pid", ctypes.CFUNCTYPE(ctypes.c_int)(address)())
"""


@pytest.fixture
def unix_listener(tmp_path: Path) -> Iterator[str]:
    """A Unix socket on the host that greets every client with `hello`."""
    path = str(tmp_path / "host.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello")

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


def probe(jailer: Jailer, jail: NetworkJail | None, *args: str) -> str:
    done = jailer.run(jail, "", argv=[*PY, PROBE, *args])
    return done.stdout.strip() or f"exit {done.returncode}: {done.stderr.strip()}"


def test_unix_sockets_are_refused_to_python_perl_and_socat(
        gates: Gates, jailer: Jailer, unix_listener: str, socat_path: str) -> None:
    perl = "perl -e 'socket(my $s, 1, 1, 0) or die \"$!\\n\"; print \"created\\n\"'"
    socat = f"socat -u UNIX-CONNECT:{unix_listener} -"
    assert probe(jailer, None, "unix", unix_listener) == "ok hello"
    assert jailer.run(None, perl).stdout == "created\n"
    assert jailer.run(None, socat).stdout == "hello"
    gate = gates()
    assert probe(jailer, gate.jail(), "unix", unix_listener) == "EPERM"
    refused = jailer.run(gate.jail(), perl)
    assert refused.stderr == "Operation not permitted\n" and refused.stdout == ""
    by_socat = jailer.run(gate.jail(), socat)
    assert by_socat.returncode != 0 and "Operation not permitted" in by_socat.stderr


def test_the_bridge_has_unix_sockets_and_the_command_does_not(
        gates: Gates, jailer: Jailer, unix_listener: str, upstream: Upstream) -> None:
    gate = gates("allowed.test", allow_local_binding=True)
    both = (f"curl -sS http://allowed.test:{upstream.port}/ && "
            f"{sys.executable} -I -c 'import socket; socket.socket(socket.AF_UNIX)'")
    done = jailer.run(gate.jail(), both)
    assert done.stdout == "upstream saw /\n"
    assert "PermissionError: [Errno 1] Operation not permitted" in done.stderr
    assert probe(jailer, gate.jail(), "unix", unix_listener) == "EPERM"


@pytest.mark.parametrize("fields", [{"allow_all_unix_sockets": True},
                                    {"allow_unix_sockets": ("PATH",)}])
@pytest.mark.parametrize("allowed", [(), ("allowed.test",)])
def test_unix_sockets_when_the_settings_allow_them(
        gates: Gates, jailer: Jailer, unix_listener: str, fields: dict[str, object],
        allowed: tuple[str, ...]) -> None:
    if "allow_unix_sockets" in fields:
        fields = {"allow_unix_sockets": (unix_listener,)}
    gate = gates(*allowed, **fields)
    assert probe(jailer, gate.jail(), "unix", unix_listener) == "ok hello"
    assert probe(jailer, gate.jail(), "vsock") == "EPERM"  # never, whatever is allowed


@pytest.mark.parametrize(("call", "control"), [
    ("io_uring_setup", "EFAULT"),
    ("ptrace", "ok"),
    ("unshare_user", "ok"),
])
def test_calls_that_reach_beyond_the_sandbox_are_refused(
        gates: Gates, jailer: Jailer, call: str, control: str) -> None:
    assert probe(jailer, None, call) == control
    assert probe(jailer, gates().jail(), call) == "EPERM"


def test_tools_that_need_them_fail(gates: Gates, jailer: Jailer) -> None:
    assert jailer.run(None, "unshare -U true").returncode == 0
    nested = jailer.run(gates().jail(), "unshare -U true")
    assert nested.returncode != 0 and "Operation not permitted" in nested.stderr
    if os.path.exists("/usr/bin/strace"):
        traced = jailer.run(gates().jail(), "strace -o /dev/null true")
        assert traced.returncode != 0 and "Operation not permitted" in traced.stderr


def test_clone3_is_unavailable_and_the_c_library_falls_back(gates: Gates,
                                                             jailer: Jailer) -> None:
    assert probe(jailer, None, "clone3") != "ENOSYS"
    assert probe(jailer, gates().jail(), "clone3") == "ENOSYS"
    forked = jailer.run(gates().jail(), "(echo from a subshell) | cat; /bin/echo spawned")
    assert forked.stdout == "from a subshell\nspawned\n"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 system call tables")
def test_the_32_bit_and_x32_tables_kill_the_process(gates: Gates, jailer: Jailer) -> None:
    assert probe(jailer, None, "i386").startswith("pid ")  # the control: int 0x80 works
    killed = jailer.run(gates().jail(), "", argv=[*PY, PROBE, "i386"])
    assert killed.returncode in (-31, 128 + 31)  # SIGSYS
    assert probe(jailer, None, "x32") in ("ENOSYS", "ok")
    x32 = jailer.run(gates().jail(), "", argv=[*PY, PROBE, "x32"])
    assert x32.returncode in (-31, 128 + 31) and x32.stdout == ""


def _install(program: bytes) -> None:
    """What the Landlock fallback does in the child: no_new_privs, then the filter."""
    libc = ctypes.CDLL(None, use_errno=True)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    prog = Prog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def test_the_program_installs_with_prctl_outside_bubblewrap(unix_listener: str) -> None:
    program = seccomp_program(allow_unix_sockets=False)
    done = subprocess.run([*PY, PROBE, "unix", unix_listener], capture_output=True,
                          text=True, timeout=60, check=False,
                          preexec_fn=lambda: _install(program))
    assert done.stdout.strip() == "EPERM", done.stderr
    control = subprocess.run([*PY, PROBE, "unix", unix_listener], capture_output=True,
                             text=True, timeout=60, check=False)
    assert control.stdout.strip() == "ok hello"


def test_the_no_network_program_leaves_no_way_out() -> None:
    """For a sandbox without a network namespace (the Landlock fallback)."""
    program = seccomp_program(allow_unix_sockets=False, allow_network=False)
    done = subprocess.run([*PY, PROBE, "families"], capture_output=True, text=True,
                          timeout=60, check=False, preexec_fn=lambda: _install(program))
    assert done.stdout.splitlines() == ["AF_INET EPERM", "AF_INET6 EPERM", "AF_NETLINK ok",
                                        "AF_UNIX EPERM", "socketpair ok"], done.stderr
