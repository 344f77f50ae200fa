"""What this machine can enforce, found once per process by trying it.

Above: the session's sandbox (which picks its mechanism from this) and `wisp sandbox
check`. Below: a real bubblewrap trial run, the Landlock ABI syscall and the cgroup mounts.

A trial run, not a look at sysctls: AppArmor's userns restriction, a container's seccomp
profile or a nested namespace each make bubblewrap fail in its own way, and only running
it shows which. The ladder: bubblewrap (namespaces, masks, pid namespace) → Landlock (write
confinement only) → none, where a sandboxed command is refused, never run unconfined.

`WISP_BWRAP` names the bubblewrap binary to use (empty: none), and `WISP_NO_LANDLOCK=1`
leaves Landlock out, so either fallback can be checked on a machine that has both.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from typing import Literal

Mechanism = Literal["bubblewrap", "landlock", "none"]
_TRIAL_TIMEOUT_S = 10
_NAMESPACES = ("--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
               "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL")


class BwrapProbe:
    """The outcome of a bubblewrap trial: usable or not, and with which options."""

    __slots__ = ("disable_userns", "error", "path", "version", "weak_proc")

    def __init__(self, path: str | None, version: str = "", error: str = "",
                 *, disable_userns: bool = False, weak_proc: bool = False) -> None:
        self.path = path
        self.version = version
        self.error = error  # empty when it works
        self.disable_userns = disable_userns  # --disable-userns is understood
        self.weak_proc = weak_proc  # only a bind of the host /proc works here

    @property
    def works(self) -> bool:
        return self.path is not None and not self.error


class Probe:
    """Everything the sandbox needs to know about the machine."""

    __slots__ = ("bwrap", "landlock_abi", "landlock_error", "pids_cgroup", "pids_error")

    def __init__(self, bwrap: BwrapProbe, landlock_abi: int, landlock_error: str,
                 pids_cgroup: str | None, pids_error: str) -> None:
        self.bwrap = bwrap
        self.landlock_abi = landlock_abi
        self.landlock_error = landlock_error
        self.pids_cgroup = pids_cgroup  # a folder new cgroups with a pids limit go in
        self.pids_error = pids_error

    @property
    def mechanism(self) -> Mechanism:
        if self.bwrap.works:
            return "bubblewrap"
        if self.landlock_abi > 0:
            return "landlock"
        return "none"

    def why_not(self) -> str:
        """Why nothing better than `mechanism` is available, for messages."""
        reasons = [f"bubblewrap: {self.bwrap.error or 'not found'}"]
        if self.mechanism == "none":
            reasons.append(f"Landlock: {self.landlock_error}")
        return "; ".join(reasons)


_CACHE: dict[tuple[str | None, bool, bool], Probe] = {}


def probe(env: Mapping[str, str] | None = None, *, weaker_nested: bool = False) -> Probe:
    """The machine's probe, run on the first call and cached for the process."""
    env = os.environ if env is None else env
    path = find_bwrap(env)
    key = (path, weaker_nested, env.get("WISP_NO_LANDLOCK") == "1")
    found = _CACHE.get(key)
    if found is None:
        abi, landlock_error = (0, "turned off by WISP_NO_LANDLOCK") if key[2] else \
            landlock_abi()
        cgroup, cgroup_error = pids_cgroup_root()
        found = _CACHE[key] = Probe(try_bwrap(path, weaker_nested), abi, landlock_error,
                                    cgroup, cgroup_error)
    return found


def find_bwrap(env: Mapping[str, str]) -> str | None:
    if "WISP_BWRAP" in env:
        return env["WISP_BWRAP"] or None
    for folder in (env.get("PATH") or os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "bwrap")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None


def _run(argv: list[str]) -> str:
    """'' when `argv` ran and exited 0, else what went wrong."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=_TRIAL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    text = done.stderr.decode("utf-8", "replace").strip()
    return text.splitlines()[-1] if text else f"exit status {done.returncode}"


def try_bwrap(path: str | None, weaker_nested: bool) -> BwrapProbe:
    """A real run of the profile's namespaces: with --disable-userns if this bubblewrap
    has it, and with the host's /proc only when the fresh one cannot be mounted and the
    user allowed that weaker mode."""
    if path is None:
        return BwrapProbe(None, error="bwrap is not installed (Debian: apt install bubblewrap)")
    base = [path, *_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev"]
    attempts = [(True, False), (False, False)] + ([(True, True), (False, True)]
                                                  if weaker_nested else [])
    error = ""
    for disable_userns, weak in attempts:
        argv = [*base, *(["--disable-userns"] if disable_userns else []),
                *(["--ro-bind", "/proc", "/proc"] if weak else ["--proc", "/proc"]),
                "--", "true"]
        failure = _run(argv)
        if not failure:
            return BwrapProbe(path, _version(path), disable_userns=disable_userns,
                              weak_proc=weak)
        error = error or failure
    return BwrapProbe(path, error=f"{error} (a trial run of bubblewrap failed: user "
                      "namespaces may be blocked here, e.g. by AppArmor or a container)")


def _version(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=_TRIAL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def landlock_abi() -> tuple[int, str]:
    """(ABI version, '') or (0, why not)."""
    from wisp.sandbox.landlock import abi_version

    return abi_version()


def pids_cgroup_root() -> tuple[str | None, str]:
    """A cgroup folder where a child with a `pids.max` can be made, for root: the kernel
    exempts uid 0 from RLIMIT_NPROC, so only a pids cgroup stops a fork bomb there. Not
    looked for as another user, whose process limit the rlimit already holds."""
    if os.geteuid() != 0:
        return None, "not needed (RLIMIT_NPROC holds for a non-root user)"
    from wisp.sandbox.cgroups import usable_pids_root

    return usable_pids_root()
