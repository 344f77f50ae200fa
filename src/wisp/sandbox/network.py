"""Network egress and socket families of sandboxed commands: the session's `NetworkGate`
and the `NetworkJail` it adds to each bubblewrap run.

Above: the sandbox's command runner (core), which appends `jail.bwrap_args` to the
bubblewrap argv after its own mounts (they need its `--dev /dev`), passes
`jail.pass_fds`, sets `jail.env` and runs `jail.wrap(inner)` inside; and the Landlock
fallback, which installs `seccomp_program(...)` itself. Below: the filtering proxy
(`proxy`), the bridge into the namespace (`bridge`) and the seccomp program (`seccomp`).

Per policy:
- No allowed domain (the default): `--unshare-net` and the full seccomp program, Unix
  sockets refused. Nothing else starts: no proxy, no bridge, no extra cost.
- Allowed domains: the proxy starts once, on the first command that needs it, and stays
  until `close()` (or the interpreter's exit). Each command gets the proxy's folder bound
  at `bridge.MOUNT`, bubblewrap's seccomp program without the AF_UNIX rule (the bridge
  needs it to reach the proxy) and the bridge in front of the command, which installs
  the AF_UNIX rule for the command alone. Without perl the bridge cannot run: commands
  get no egress at all (`egress` says so) rather than a weaker filter.

bubblewrap reads its `--seccomp` program from a file descriptor and the read moves the
descriptor's offset for every holder, so each jail gets a fresh pipe holding the
program; a pipe is closed here once bubblewrap has drained it (or at `close()`), never
before, so no descriptor is closed under a command that has not started yet.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import struct
import termios
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.sandbox import seccomp

if TYPE_CHECKING:  # the proxy's modules load only when a session allows a domain
    from wisp.sandbox.egress import Resolver
    from wisp.sandbox.hosts import HostRules
    from wisp.sandbox.proxy import ProxyServer

__all__ = ["NetworkGate", "NetworkJail", "NetworkPolicy", "seccomp_program"]

_SOCKET_NAME = "proxy.sock"
_UNIX_PATH_MAX = 107


@dataclass(frozen=True)
class NetworkPolicy:
    allowed_domains: tuple[str, ...]      # "example.com", "*.example.com"; empty = no egress
    denied_domains: tuple[str, ...] = ()  # checked first
    allow_local_binding: bool = False     # exact entries may reach local addresses
    allow_unix_sockets: tuple[str, ...] = ()  # non-empty: socket(AF_UNIX) is allowed
    allow_all_unix_sockets: bool = False
    http_proxy_port: int | None = None    # the user's own proxy on the host's loopback
    socks_proxy_port: int | None = None
    # Any public host (a served environment's unrestricted networking); never set from
    # settings. Local addresses stay refused: no exact entry admits them.
    any_public_host: bool = False


@dataclass(frozen=True)
class NetworkJail:
    """The network options of ONE command: its seccomp descriptor is read (used up) by
    the bubblewrap it starts, so every command asks `NetworkGate.jail()` anew."""

    bwrap_args: tuple[str, ...]
    env: Mapping[str, str]
    pass_fds: tuple[int, ...]
    wrap: Callable[[list[str]], list[str]]


@lru_cache(maxsize=8)
def seccomp_program(*, allow_unix_sockets: bool, allow_network: bool = True) -> bytes:
    """The seccomp program (`struct sock_filter[]` bytes) for this machine: see
    `wisp.sandbox.seccomp`. `allow_network=False` is for a sandbox without a network
    namespace (the Landlock fallback): no socket that can reach a network. Raises
    `seccomp.UnsupportedArch` off x86_64 and aarch64."""
    return seccomp.program(allow_unix_sockets=allow_unix_sockets, allow_network=allow_network)


def _identity(inner: list[str]) -> list[str]:
    return inner


class _Static:
    """What every jail of the gate shares, computed on the first `jail()`."""

    __slots__ = ("args", "env", "program", "wrap")

    def __init__(self, args: tuple[str, ...], env: Mapping[str, str], program: bytes,
                 wrap: Callable[[list[str]], list[str]]) -> None:
        self.args = args
        self.env = env
        self.program = program
        self.wrap = wrap


class NetworkGate:
    """One per session: starts the proxy lazily the first time a command needs egress,
    reused after. `on_violation(host)` runs on the proxy's thread for each refused host."""

    def __init__(self, policy: NetworkPolicy, *, runtime_dir: Path,
                 on_violation: Callable[[str], None],
                 resolver: Resolver | None = None) -> None:
        self.policy = policy
        self._runtime_dir = runtime_dir
        self._on_violation = on_violation
        self._resolver = resolver  # tests map names without DNS; None: the system's
        self._lock = threading.Lock()
        self._static: _Static | None = None
        self._pipes: list[int] = []
        self._proxy: ProxyServer | None = None
        self._folder: str | None = None
        self._closed = False
        self.egress = "none"  # "none", "proxy", or why egress is unavailable
        _track(self)

    @property
    def unix_sockets(self) -> bool:
        return self.policy.allow_all_unix_sockets or bool(self.policy.allow_unix_sockets)

    def jail(self) -> NetworkJail:
        """The options for one command; cheap after the first call."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the network gate is closed")
            static = self._static or self._prepare()
            self._sweep()
            fd = self._program_fd(static.program)
            return NetworkJail((*static.args, "--seccomp", str(fd)), static.env, (fd,),
                               static.wrap)

    def close(self) -> None:
        """Stops the proxy and removes its socket; idempotent."""
        with _LIVE_LOCK:
            _LIVE.discard(self)
        with self._lock:
            self._closed = True
            pipes, self._pipes = self._pipes, []
            proxy, self._proxy = self._proxy, None
            folder, self._folder = self._folder, None
        for fd in pipes:
            with contextlib.suppress(OSError):
                os.close(fd)
        if proxy is not None:
            proxy.stop()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    # Once per gate ---------------------------------------------------------------------

    def _prepare(self) -> _Static:
        from wisp.sandbox import bridge
        from wisp.sandbox.hosts import HostRules

        policy = self.policy
        rules = HostRules(policy.allowed_domains, policy.denied_domains,
                          allow_local=policy.allow_local_binding,
                          any_public=policy.any_public_host)
        perl = bridge.perl() if rules.allows_any else None
        if rules.allows_any and perl is None:
            self.egress = "unavailable: perl is not installed, so no bridge can run"
        if perl is None:
            self._static = _Static(("--unshare-net",), {},
                                   seccomp_program(allow_unix_sockets=self.unix_sockets),
                                   _identity)
            return self._static
        folder = self._start_proxy(rules)
        command_filter = (None if self.unix_sockets
                          else seccomp_program(allow_unix_sockets=False))
        prctl = seccomp.prctl_number()

        def wrap(inner: list[str]) -> list[str]:
            return bridge.argv(perl, prctl, command_filter, inner)

        self._static = _Static(("--unshare-net", "--ro-bind", folder, bridge.MOUNT),
                               bridge.environment(),
                               seccomp_program(allow_unix_sockets=True), wrap)
        self.egress = "proxy"
        return self._static

    def _start_proxy(self, rules: HostRules) -> str:
        from wisp.sandbox.egress import Egress, system_resolver
        from wisp.sandbox.proxy import ProxyServer

        folder = _private_folder(self._runtime_dir)
        policy = self.policy
        egress = Egress(rules, self._on_violation,
                        resolver=self._resolver or system_resolver,
                        http_upstream=policy.http_proxy_port,
                        socks_upstream=policy.socks_proxy_port)
        proxy = ProxyServer(egress, os.path.join(folder, _SOCKET_NAME))
        try:
            proxy.start()
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._proxy, self._folder = proxy, folder
        return folder

    # Per jail --------------------------------------------------------------------------

    def _program_fd(self, program: bytes) -> int:
        read, write = os.pipe2(os.O_CLOEXEC)
        try:
            os.write(write, program)  # far below a pipe's capacity: never blocks
        finally:
            os.close(write)
        self._pipes.append(read)
        return read

    def _sweep(self) -> None:
        """Closes the pipes bubblewrap has drained."""
        keep = []
        for fd in self._pipes:
            if _unread(fd) == 0:
                os.close(fd)
            else:
                keep.append(fd)
        self._pipes = keep


def _unread(fd: int) -> int:
    buf = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    count: int = struct.unpack("i", buf)[0]
    return count


def _private_folder(runtime_dir: Path) -> str:
    """A new 0700 folder for the socket, in `runtime_dir` unless its path would make the
    socket's longer than a Unix socket address can hold."""
    import tempfile

    base = str(runtime_dir)
    if len(base) + len("/wisp-net-XXXXXXXX/") + len(_SOCKET_NAME) > _UNIX_PATH_MAX:
        base = tempfile.gettempdir()
    os.makedirs(base, mode=0o700, exist_ok=True)
    return tempfile.mkdtemp(prefix="wisp-net-", dir=base)


_LIVE_LOCK = threading.Lock()
_LIVE: set[NetworkGate] = set()  # open gates (a proxy thread outlives a dropped gate)
_HOOKED = False


def _track(gate: NetworkGate) -> None:
    """Gates still open at the interpreter's exit are closed then."""
    global _HOOKED
    with _LIVE_LOCK:
        _LIVE.add(gate)
    if not _HOOKED:
        _HOOKED = True
        atexit.register(_close_all)


def _close_all() -> None:
    with _LIVE_LOCK:
        gates = list(_LIVE)
    for gate in gates:
        gate.close()
