"""The fallback where bubblewrap cannot make namespaces: Landlock, through ctypes.

Above: the session's sandbox, which builds one `Ruleset` per session and hands
`restrict` to the child as its `preexec_fn`. Below: the three Landlock syscalls and prctl.

What it holds: writes only in the working folders, the private temp folder and a few
harmless devices; no TCP bind or connect (ABI 4 and later); no abstract Unix sockets or
signals beyond the command's own processes (ABI 6 and later). What it cannot do (see
docs/sandbox.md): hide a path from reading, protect a path inside a writable folder,
give the command a pid namespace, or filter UDP. So it never earns the auto-allow of
`autoAllowBashIfSandboxed`.

The rules are built once in the parent; the child only sets NO_NEW_PRIVS and calls
`landlock_restrict_self` (two syscalls, no allocation to speak of) between fork and exec.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable, Sequence

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # x86_64 and aarch64 alike
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE_ALL = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
REFER, TRUNCATE = 1 << 13, 1 << 14
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def abi_version() -> tuple[int, str]:
    """(ABI, '') when Landlock is usable, else (0, why not)."""
    libc = _libc()
    abi = libc.syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(_VERSION_FLAG))
    if abi > 0:
        return int(abi), ""
    code = ctypes.get_errno()
    if code == errno.EOPNOTSUPP:
        return 0, "Landlock is built into this kernel but disabled at boot (lsm=)"
    if code == errno.ENOSYS:
        return 0, "this kernel has no Landlock"
    return 0, f"Landlock is unavailable: {os.strerror(code)}"


def _fs_rights(abi: int) -> int:
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_ALL
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


class Ruleset:
    """A Landlock ruleset fd allowing writes beneath `writable` only (and the harmless
    devices), with TCP and cross-domain signals and abstract sockets denied as the ABI
    allows. `seccomp` (cBPF bytes) is installed in the child too when given."""

    def __init__(self, abi: int, writable: Sequence[str], seccomp: bytes | None = None) -> None:
        self.abi = abi
        self._libc = _libc()
        fs = _fs_rights(abi)
        attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                            SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0)
        size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
        fd = self._libc.syscall(ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr),
                                ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        for path in writable:
            self._allow(path, fs)
        file_rights = WRITE_FILE | (TRUNCATE if abi >= 3 else 0)
        for device in DEVICES:
            self._allow(device, file_rights)
        self._seccomp = self._filter(seccomp)

    def _allow(self, path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a folder that does not exist has nothing to allow
        try:
            rule = _PathBeneath(rights if os.path.isdir(path) else rights & (
                WRITE_FILE | TRUNCATE), fd)
            if self._libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(self.fd),
                                  ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                  ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    @staticmethod
    def _filter(program: bytes | None) -> tuple[_SockFprog, ctypes.Array[ctypes.c_char]] | None:
        if not program:
            return None
        buffer = ctypes.create_string_buffer(program, len(program))
        return _SockFprog(len(program) // 8, ctypes.addressof(buffer)), buffer

    def restrict(self) -> Callable[[], None]:
        """The child's `preexec_fn`: NO_NEW_PRIVS, the ruleset, then the seccomp filter.
        Raising makes Popen fail, so a command never runs less confined than asked."""
        libc, fd, seccomp = self._libc, self.fd, self._seccomp

        def apply() -> None:
            if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
            if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(fd),
                            ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
            if seccomp is not None and libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER,
                                                  ctypes.byref(seccomp[0]), 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "seccomp filter refused")

        return apply

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
