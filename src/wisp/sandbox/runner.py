"""`CommandSandbox`: one session's sandbox, which every model command of the session runs in.

Above: the Bash tool (foreground and background, main thread and subagents alike: they
share the session's engine config) and the permission judge (`SandboxedCommands`). Below:
the probe (which mechanism is in force), the profile (bubblewrap argv) or the Landlock
ruleset, the session's pids cgroup and, when that module is installed, the network gate
of `wisp.sandbox.network`.

Once per session: the probe (cached per process), the private temp folder, the Landlock
ruleset, the cgroup, the network gate. Per command: the mask plan (a few stat calls and
the placeholders of absent protected paths) and the argv. No interpreter starts inside.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wisp.jsontypes import JSON
from wisp.sandbox.config import SandboxConfig
from wisp.sandbox.netgate import NetworkSetup
from wisp.sandbox.probe import Mechanism, Probe
from wisp.sandbox.profile import SandboxProfile, bwrap_argv
from wisp.sandbox.view import MountPlan

_LIVE: weakref.WeakSet[CommandSandbox] = weakref.WeakSet()


class SandboxUnavailable(Exception):
    """The sandbox is on but nothing on this machine can enforce it: the command is not
    run (never unconfined while the user believes otherwise)."""


class Launch:
    """How to start one sandboxed command, and what to undo after it."""

    __slots__ = ("argv", "env", "pass_fds", "plan", "preexec_fn")

    def __init__(self, argv: list[str], env: dict[str, str], *,
                 plan: MountPlan | None = None, pass_fds: tuple[int, ...] = (),
                 preexec_fn: Callable[[], None] | None = None) -> None:
        self.argv = argv
        self.env = env
        self.plan = plan
        self.pass_fds = pass_fds
        self.preexec_fn = preexec_fn

    def release(self) -> None:
        """After the command (and everything in it) has ended: placeholders go."""
        if self.plan is not None:
            self.plan.release()


class Confinement:
    """What a served session adds to the sandbox (`wisp.serve.containment`): commands see
    only `env` (never the service's own variables), need bubblewrap (the Landlock
    fallback cannot hide the service's data from them), and run in cgroups with these
    `limits` (controller → processes, bytes or CPUs) under `roots`."""

    __slots__ = ("env", "limits", "roots")

    def __init__(self, env: Mapping[str, str], roots: dict[str, str],
                 limits: dict[str, float]) -> None:
        self.env = dict(env)
        self.roots = roots
        self.limits = limits


class CommandSandbox:
    """The sandbox of one session. `decide` says whether a Bash call runs in it; `launch`
    prepares one command; `status` reports the mechanism for init, /status and checks."""

    def __init__(self, config: SandboxConfig, profile: SandboxProfile, probe: Probe, *,
                 network: NetworkSetup | None = None,
                 rules: Callable[[], tuple[Sequence[str], Sequence[str]]] | None = None,
                 confinement: Confinement | None = None) -> None:
        self.config = config
        self.profile = profile
        self.probe = probe
        self.network = network
        self._rules = rules  # (Read deny patterns, Edit deny patterns), read per command
        self.confinement = confinement
        self._planner = profile.planner()
        self._lock = threading.Lock()
        self._ruleset: Any = None
        self._cgroup: Any = None
        self._closed = False
        self._refused: list[str] = []
        _LIVE.add(self)

    # What runs where -----------------------------------------------------------------

    @property
    def mechanism(self) -> Mechanism:
        return self.probe.mechanism

    @property
    def auto_allow(self) -> bool:
        """`autoAllowBashIfSandboxed`, earned only by the full profile: Landlock cannot
        mask paths inside the working folders, so it does not skip a prompt."""
        return self.config.auto_allow and self.mechanism == "bubblewrap"

    def override_requested(self, tool_input: Mapping[str, Any]) -> bool:
        """`dangerouslyDisableSandbox: true` that counts: it is ignored (the command stays
        sandboxed) when `allowUnsandboxedCommands` is false."""
        return tool_input.get("dangerouslyDisableSandbox") is True and \
            self.config.allow_unsandboxed

    def runs_sandboxed(self, tool_input: Mapping[str, Any]) -> bool:
        command = tool_input.get("command")
        if not isinstance(command, str) or self.override_requested(tool_input):
            return False
        return not excluded(command, self.config.excluded_commands)

    # Launching -----------------------------------------------------------------------

    def launch(self, inner: Sequence[str], env: Mapping[str, str], cwd: str) -> Launch:
        """`inner` is [shell, "-c", command]. Raises SandboxUnavailable when nothing here
        can enforce the sandbox."""
        if self.mechanism == "none":
            raise SandboxUnavailable(refusal(self.probe))
        if self.confinement is not None:
            if self.mechanism != "bubblewrap":
                raise SandboxUnavailable(served_refusal(self.probe))
            env = self.confinement.env
        shell, flag, command = inner
        inner_argv = [shell, flag, self.profile.limits.prelude() + command]
        env = {**env, "TMPDIR": self.profile.temp_dir}
        if self.mechanism == "landlock":
            return Launch(inner_argv, env, preexec_fn=self._landlock().restrict())
        return self._bwrap(inner_argv, env, cwd)

    def _bwrap(self, inner: list[str], env: dict[str, str], cwd: str) -> Launch:
        read, write = self._rules() if self._rules is not None else ((), ())
        plan = self._planner.plan(extra_hidden=read, extra_readonly=write)
        extra: list[str] = []
        fds: tuple[int, ...] = ()
        if self.network is not None:
            jail = self.network.jail()
            extra, fds = list(jail.bwrap_args), tuple(jail.pass_fds)
            inner = list(jail.wrap(inner))
            env.update(jail.env)
        bwrap = self.probe.bwrap
        assert bwrap.path is not None  # mechanism "bubblewrap" means it ran
        argv = bwrap_argv(bwrap.path, self.profile, plan, inner, extra=[*extra, "--chdir", cwd],
                          disable_userns=bwrap.disable_userns, weak_proc=bwrap.weak_proc)
        cgroup = self._session_cgroup()
        if cgroup is not None:
            argv = cgroup.enter_argv(argv)
        return Launch(argv, env, plan=plan, pass_fds=fds)

    def _landlock(self) -> Any:
        with self._lock:
            if self._ruleset is None:
                from wisp.sandbox.landlock import Ruleset

                seccomp = (self.network.seccomp(allow_network=False)
                           if self.network is not None else None)
                self._ruleset = Ruleset(self.probe.landlock_abi,
                                        (*self.profile.writable, self.profile.temp_dir),
                                        seccomp)
            return self._ruleset

    def _session_cgroup(self) -> Any:
        """Made on first use: a served session's resource cgroups, or, for root, the pids
        cgroup only a cgroup can give (see the probe)."""
        roots, limits = self._cgroup_wanted()
        if not roots:
            return None
        with self._lock:
            if self._cgroup is None:
                from wisp.sandbox.cgroups import SessionCgroup

                try:
                    self._cgroup = SessionCgroup(roots, limits)
                except OSError:
                    self._cgroup = False  # the rlimits still apply
            return self._cgroup or None

    def _cgroup_wanted(self) -> tuple[dict[str, str], dict[str, float]]:
        if self.confinement is not None:
            return self.confinement.roots, self.confinement.limits
        if self.probe.pids_cgroup is None:
            return {}, {}
        return ({"pids": self.probe.pids_cgroup},
                {"pids": float(self.profile.limits.max_processes)})

    # Reporting -----------------------------------------------------------------------

    def refused_host(self, host: str) -> None:
        """The network gate's `on_violation`: kept for the next command's report."""
        with self._lock:
            self._refused.append(host)

    def violations(self, command: str, output: str, launch: Launch, cwd: str) -> list[str]:
        """What the command was refused, as far as its output and the gate tell."""
        from wisp.sandbox import violations as v

        plan = launch.plan
        view = v.View(cwd, (*self.profile.writable, self.profile.temp_dir),
                      plan.hidden if plan else (), plan.readonly if plan else (),
                      landlock=self.mechanism == "landlock")
        with self._lock:
            hosts, self._refused = self._refused, []
        ignore = self.config.ignore_violations
        return [*v.unignored(command, "file", v.file_violations(output, view), ignore),
                *v.unignored(command, "network", v.network_violations(output, hosts), ignore)]

    def status(self) -> JSON:
        from wisp.sandbox.report import status_fields

        network = "none"
        if self.network is not None and self.mechanism == "bubblewrap":
            network = self.network.egress  # the Landlock fallback has no network at all
        return status_fields(self.config, self.probe, network=network)

    def close(self) -> None:
        """Ends what the session made: its cgroup, temp folder, ruleset and proxy."""
        if self._closed:
            return
        self._closed = True
        if self._cgroup:
            self._cgroup.close()
        if self._ruleset is not None:
            self._ruleset.close()
        if self.network is not None:
            self.network.close()
        import shutil

        for folder in (self.profile.temp_dir, self.profile.temp_dir + "-run"):
            shutil.rmtree(folder, ignore_errors=True)


def excluded(command: str, patterns: Sequence[str]) -> bool:
    """Whether `command` runs outside the sandbox: every command of the line matches an
    `excludedCommands` pattern (the grammar of permission rules; a bare word is a
    prefix), so `docker ps && python -c …` stays inside when only docker is excluded."""
    if not patterns:
        return False
    from wisp.shell import analyse

    commands = analyse(command, cwd="/", env={}).commands
    return bool(commands) and all(any(_matches(p, c.text) for p in patterns)
                                  for c in commands)


def _matches(pattern: str, text: str) -> bool:
    from wisp.rules import command_matches

    pattern = pattern.strip()
    if ":*" not in pattern and "*" not in pattern:
        return text == pattern or text.startswith(pattern + " ")
    return command_matches(pattern, text)


def refusal(probe: Probe) -> str:
    return ("The sandbox is enabled in settings but cannot run on this machine, so the "
            f"command was not run ({probe.why_not()}). Install bubblewrap (Debian: apt "
            "install bubblewrap) or allow unprivileged user namespaces; `wisp sandbox "
            "check` shows what was tried.")


def served_refusal(probe: Probe) -> str:
    return ("wisp serve runs every command of a session in bubblewrap, which cannot run "
            f"here (bubblewrap: {probe.bwrap.error or 'not found'}), so the command was not "
            "run. "
            "Install bubblewrap (Debian: apt install bubblewrap) and allow unprivileged "
            "user namespaces; `wisp sandbox check` shows what was tried.")


def new_temp_dir() -> str:
    """The session's private temp folder (TMPDIR inside), under wisp's own temp folder,
    which the sandbox hides as a whole (other sessions' outputs are there)."""
    base = os.path.join(temp_root(), f"wisp-{os.getuid()}")
    os.makedirs(base, mode=0o700, exist_ok=True)
    while True:
        path = os.path.join(base, f"sandbox-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path


def temp_root() -> str:
    """`tempfile.gettempdir()` (where wisp keeps tool output) without importing tempfile
    when nothing has yet: with what it imports, that costs several ms per session."""
    module = sys.modules.get("tempfile")
    if module is not None:
        found: str = module.gettempdir()
        return found
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return os.path.abspath(value)
    return "/tmp"


def close_all() -> None:
    """At exit: every session's sandbox, and any placeholder still held."""
    from wisp.sandbox import placeholders

    for sandbox in list(_LIVE):
        with contextlib.suppress(Exception):
            sandbox.close()
    placeholders.release_all()
