"""The seccomp program of sandboxed commands: classic BPF, assembled here in pure Python
(no libseccomp), for x86_64 and aarch64.

Above: `wisp.sandbox.network`, which hands the bytes to bubblewrap (`--seccomp FD`) or to
the bridge's loader inside the sandbox, and the Landlock fallback, which installs them
with prctl. Below: the kernel's `struct seccomp_data` and the syscall tables of both
architectures.

What it holds, in order:
1. The architecture must be the one the program was built for, else the process is
   killed: a 32-bit syscall table (i386 `socketcall`, arm32) would bypass every number
   below. On x86_64 the x32 numbers (bit 30 set) are killed for the same reason.
2. `socket(AF_VSOCK)` always, and `socket(AF_UNIX)` unless Unix sockets are allowed, fail
   with EPERM: a pathname or abstract socket is a way out of the network namespace.
   Without a network namespace to hold egress (the Landlock fallback), `allow_network`
   false turns this into an allow-list: netlink, and Unix sockets if allowed; every
   other family (IPv4, IPv6, packet, ...) fails with EPERM. Only creation is checked: a
   socket inherited or received over SCM_RIGHTS is not.
3. `clone`/`unshare` with CLONE_NEWUSER fail with EPERM (a new user namespace could undo
   the masks); `clone3` fails with ENOSYS, because its flags sit in memory the filter
   cannot read, and C libraries fall back to `clone` on ENOSYS.
4. Calls that reach other processes or the kernel's attack surface fail with EPERM:
   io_uring (it creates sockets without `socket()`), ptrace, process_vm_readv/writev,
   pidfd_getfd, keyctl and friends, bpf, perf_event_open, userfaultfd, mount and the new
   mount API, setns.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

__all__ = ["ARCHES", "Arch", "UnsupportedArch", "prctl_number", "program"]

# BPF opcodes (linux/bpf_common.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
EPERM = 1
ENOSYS = 38

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR = 0
_ARCH = 4
_ARG0_LOW = 16  # little-endian: the low half of args[0]; int arguments live there

AF_UNIX = 1
AF_NETLINK = 16
AF_VSOCK = 40
CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000

_DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
           "io_uring_setup", "io_uring_enter", "io_uring_register",
           "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
           "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
           "fsconfig", "fsmount", "fspick", "mount_setattr", "setns")


class UnsupportedArch(RuntimeError):
    """No syscall table here for this machine: no program can be built."""


@dataclass(frozen=True)
class Arch:
    audit: int                 # AUDIT_ARCH_* as seccomp_data.arch reports it
    x32: bool                  # whether x32 numbers (bit 30) share this audit arch
    numbers: dict[str, int]


_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
           "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438,
           "mount_setattr": 442}

ARCHES: dict[str, Arch] = {
    "x86_64": Arch(0xC000003E, True, {
        **_COMMON, "socket": 41, "clone": 56, "ptrace": 101, "pivot_root": 155,
        "prctl": 157, "mount": 165, "umount2": 166, "add_key": 248, "request_key": 249,
        "keyctl": 250, "unshare": 272, "perf_event_open": 298, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
        "userfaultfd": 323}),
    "aarch64": Arch(0xC00000B7, False, {
        **_COMMON, "umount2": 39, "mount": 40, "pivot_root": 41, "unshare": 97,
        "ptrace": 117, "prctl": 167, "socket": 198, "add_key": 217, "request_key": 218,
        "keyctl": 219, "clone": 220, "perf_event_open": 241, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
        "userfaultfd": 282}),
}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def _arch(machine: str | None) -> Arch:
    name = (machine or os.uname().machine).lower()
    found = ARCHES.get(_ALIASES.get(name, name))
    if found is None:
        raise UnsupportedArch(f"no seccomp program for {name} (only x86_64 and aarch64)")
    return found


def prctl_number(machine: str | None = None) -> int:
    """The prctl syscall number, for the loader that installs the program."""
    return _arch(machine).numbers["prctl"]


class _Assembler:
    """Instructions with jumps to named labels, resolved into BPF's relative offsets."""

    def __init__(self) -> None:
        self._ops: list[tuple[int, str | None, str | None, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self._labels[name] = len(self._ops)

    def load(self, offset: int) -> None:
        self._ops.append((_LD_W_ABS, None, None, offset))

    def jump(self, code: int, k: int, true: str | None, false: str | None = None) -> None:
        """`None` as a target means the next instruction."""
        self._ops.append((code, true, false, k))

    def ret(self, k: int) -> None:
        self._ops.append((_RET_K, None, None, k))

    def bytes(self) -> bytes:
        out = bytearray()
        for index, (code, true, false, k) in enumerate(self._ops):
            out += struct.pack("=HBBI", code, self._offset(index, true),
                               self._offset(index, false), k)
        return bytes(out)

    def _offset(self, index: int, label: str | None) -> int:
        if label is None:
            return 0
        distance = self._labels[label] - index - 1
        if not 0 <= distance <= 255:  # BPF jumps only forward, at most 255 instructions
            raise ValueError(f"jump to {label} out of range")
        return distance


def program(*, allow_unix_sockets: bool, allow_network: bool = True,
            machine: str | None = None) -> bytes:
    """The filter as `struct sock_filter[]` bytes (see the module doc)."""
    arch = _arch(machine)
    nr = arch.numbers
    asm = _Assembler()
    asm.load(_ARCH)
    asm.jump(_JEQ_K, arch.audit, None, "kill")
    asm.load(_NR)
    if arch.x32:
        asm.jump(_JGE_K, _X32_BIT, "kill")
    asm.jump(_JEQ_K, nr["socket"], "socket")
    asm.jump(_JEQ_K, nr["clone"], "namespaces")
    asm.jump(_JEQ_K, nr["unshare"], "namespaces")
    asm.jump(_JEQ_K, nr["clone3"], "enosys")
    for name in _DENIED:
        asm.jump(_JEQ_K, nr[name], "eperm")
    asm.ret(RET_ALLOW)
    asm.label("socket")
    asm.load(_ARG0_LOW)
    if allow_network:
        asm.jump(_JEQ_K, AF_VSOCK, "eperm")
        if not allow_unix_sockets:
            asm.jump(_JEQ_K, AF_UNIX, "eperm")
        asm.ret(RET_ALLOW)
    else:  # an allow-list: every other family may reach a network
        asm.jump(_JEQ_K, AF_NETLINK, "allow")
        if allow_unix_sockets:
            asm.jump(_JEQ_K, AF_UNIX, "allow")
        asm.ret(RET_ERRNO | EPERM)
    asm.label("namespaces")
    asm.load(_ARG0_LOW)
    asm.jump(_JSET_K, CLONE_NEWUSER, "eperm")
    asm.ret(RET_ALLOW)
    asm.label("eperm")
    asm.ret(RET_ERRNO | EPERM)
    asm.label("enosys")
    asm.ret(RET_ERRNO | ENOSYS)
    asm.label("kill")
    asm.ret(RET_KILL_PROCESS)
    asm.label("allow")
    asm.ret(RET_ALLOW)
    return asm.bytes()
