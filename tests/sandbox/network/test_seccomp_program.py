"""The seccomp program's decisions on both architectures, read by a BPF interpreter
(`bpf.py`): what the real-kernel tests cannot reach from this machine's architecture."""

from __future__ import annotations

import pytest

from tests.sandbox.network import bpf
from wisp.sandbox import seccomp

ALLOW = seccomp.RET_ALLOW
EPERM = seccomp.RET_ERRNO | seccomp.EPERM
ENOSYS = seccomp.RET_ERRNO | seccomp.ENOSYS
KILL = seccomp.RET_KILL_PROCESS
AF_INET, AF_UNIX, AF_VSOCK, AF_NETLINK = 2, 1, 40, 16
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
HIGH = 0xFFFFFFFF_00000000  # garbage in the upper half of an int argument
DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
          "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key",
          "request_key", "bpf", "perf_event_open", "userfaultfd", "mount", "umount2",
          "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
          "fspick", "mount_setattr", "setns")
OTHER_ARCHES = {"i386": 0x40000003, "arm": 0x40000028, "riscv64": 0xC00000F3}


def verdict(machine: str, name: str | int, *args: int, allow_unix: bool = False,
            network: bool = True, arch: int | None = None) -> int:
    table = seccomp.ARCHES[machine]
    nr = table.numbers[name] if isinstance(name, str) else name
    program = seccomp.program(allow_unix_sockets=allow_unix, allow_network=network,
                              machine=machine)
    return bpf.run(program, bpf.seccomp_data(nr, table.audit if arch is None else arch, args))


MACHINES = ("x86_64", "aarch64")


@pytest.mark.parametrize("machine", MACHINES)
def test_socket_families(machine: str) -> None:
    assert verdict(machine, "socket", AF_INET) == ALLOW
    assert verdict(machine, "socket", AF_NETLINK) == ALLOW
    assert verdict(machine, "socket", AF_UNIX) == EPERM
    assert verdict(machine, "socket", AF_UNIX | HIGH) == EPERM  # the kernel reads an int
    assert verdict(machine, "socket", AF_UNIX, allow_unix=True) == ALLOW
    assert verdict(machine, "socket", AF_VSOCK) == EPERM
    assert verdict(machine, "socket", AF_VSOCK, allow_unix=True) == EPERM


@pytest.mark.parametrize("machine", MACHINES)
def test_without_network_only_netlink_and_allowed_unix_sockets(machine: str) -> None:
    for family in (AF_INET, 10, 17, 21, 30, 44, AF_VSOCK, 0, 255):  # inet6, packet, ...
        assert verdict(machine, "socket", family, network=False) == EPERM
        assert verdict(machine, "socket", family, network=False, allow_unix=True) == EPERM
    assert verdict(machine, "socket", AF_NETLINK, network=False) == ALLOW
    assert verdict(machine, "socket", AF_UNIX, network=False) == EPERM
    assert verdict(machine, "socket", AF_UNIX, network=False, allow_unix=True) == ALLOW
    assert verdict(machine, "ptrace", network=False) == EPERM  # the rest holds as well
    assert verdict(machine, 0, network=False, arch=OTHER_ARCHES["i386"]) == KILL


@pytest.mark.parametrize("machine", MACHINES)
def test_new_user_namespaces(machine: str) -> None:
    assert verdict(machine, "clone", SIGCHLD) == ALLOW  # fork
    assert verdict(machine, "clone", CLONE_NEWUSER | SIGCHLD) == EPERM
    assert verdict(machine, "unshare", CLONE_NEWUSER | CLONE_NEWNS) == EPERM
    assert verdict(machine, "unshare", CLONE_NEWNS) == ALLOW  # the kernel asks for caps
    assert verdict(machine, "clone3") == ENOSYS  # so the C library falls back to clone


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("name", DENIED)
def test_denied_calls(machine: str, name: str) -> None:
    assert verdict(machine, name) == EPERM


@pytest.mark.parametrize("machine", MACHINES)
def test_ordinary_calls_pass(machine: str) -> None:
    # read, write, openat, execve on either table
    numbers = {"x86_64": (0, 1, 257, 59), "aarch64": (63, 64, 56, 221)}[machine]
    for nr in numbers:
        assert verdict(machine, nr) == ALLOW


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("arch", sorted(OTHER_ARCHES))
def test_any_other_architecture_is_killed(machine: str, arch: str) -> None:
    """A 32-bit table would give `socketcall` and other numbers: no rule here holds."""
    for nr in (0, 1, 102, seccomp.ARCHES[machine].numbers["socket"]):
        assert verdict(machine, nr, arch=OTHER_ARCHES[arch]) == KILL
    other = "aarch64" if machine == "x86_64" else "x86_64"
    assert verdict(machine, 0, arch=seccomp.ARCHES[other].audit) == KILL


def test_x32_numbers_are_killed_on_x86_64() -> None:
    x32 = 0x40000000
    assert verdict("x86_64", x32 | 41, AF_UNIX) == KILL  # x32 socket
    assert verdict("x86_64", x32 | 39) == KILL


def test_an_unknown_machine_has_no_program() -> None:
    with pytest.raises(seccomp.UnsupportedArch):
        seccomp.program(allow_unix_sockets=False, machine="riscv64")
