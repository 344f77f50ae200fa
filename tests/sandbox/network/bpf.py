"""A classic-BPF interpreter for seccomp programs, as the kernel runs them, for the
architectures this machine cannot execute (aarch64 on x86_64 and the reverse).

It knows only the instructions the seccomp program is meant to use and refuses any
other, so a test that passes here also proves the program stays within them. The
kernel's own checks are applied too: at most 4096 instructions, jumps that stay inside,
and every path ending in a return.
"""

from __future__ import annotations

import struct

LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06


def instructions(program: bytes) -> list[tuple[int, int, int, int]]:
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096
    return [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]


def seccomp_data(nr: int, arch: int, args: tuple[int, ...] = ()) -> bytes:
    """struct seccomp_data: nr, arch, instruction pointer, six 64-bit arguments."""
    full = (*args, *(0,) * (6 - len(args)))
    return struct.pack("=iIQ6Q", nr, arch, 0, *full)


def run(program: bytes, data: bytes) -> int:
    """The filter's verdict (SECCOMP_RET_*) for one system call."""
    code = instructions(program)
    accumulator = 0
    pc = 0
    while True:
        assert 0 <= pc < len(code), "jump out of the program"
        op, jt, jf, k = code[pc]
        if op == LD_W_ABS:
            assert k % 4 == 0 and k + 4 <= len(data)
            accumulator = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif op in (JEQ_K, JGE_K, JSET_K):
            taken = {JEQ_K: accumulator == k, JGE_K: accumulator >= k,
                     JSET_K: bool(accumulator & k)}[op]
            pc += 1 + (jt if taken else jf)
        elif op == RET_K:
            return k
        else:
            raise AssertionError(f"instruction {op:#x} at {pc} is not one seccomp needs")
