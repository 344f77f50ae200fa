"""One OS sandbox per served session, always on: what a session's tools may see, reach
and use.

Above: the session driver, which gives the session's runtime this sandbox, these rules
and the fenced file tools (`wisp.serve.fence`). Below: the sandbox package (bubblewrap
profile, network gate, cgroups).

A served session's commands see the host's system folders read-only and their own
workspace read-write, and nothing of the host's data. What they see is an allowlist: of
the folders at the root only the system's (`SYSTEM_ROOTS`; nothing inside /var), so the
service's data folder (every session's workspace, the SQLite store), home folders, a
checkout or data disk anywhere, temp folders and service sockets are hidden, and so are
wisp's and Claude Code's configuration and the host's secrets in /etc. What they need
to run programs stays: the interpreter wisp runs on and the PATH folders are granted
back read-only when they live in a hidden place. Their environment is a
fresh one (PATH, locale, HOME set to the workspace), never the service's own (its API
keys, its database URL).

Network: the environment's `networking`. `unrestricted` reaches any public host through
the session's filtering proxy (never the host's loopback, private networks or the cloud
metadata address); `limited` only `allowed_hosts` (plus the package registries with
`allow_package_managers`).

Limits: per session, processes, memory and CPU share (cgroups, where this process may
make them); per command, CPU seconds and file size (rlimits), and address space where
no memory cgroup holds the session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from wisp.jsontypes import JSON
from wisp.sandbox.config import SandboxConfig
from wisp.sandbox.profile import Limits, SandboxProfile
from wisp.sandbox.runner import CommandSandbox, Confinement

# Registries `allow_package_managers` opens, for the managers the API names.
PACKAGE_HOSTS = (
    "pypi.org", "files.pythonhosted.org",                              # pip
    "registry.npmjs.org", "registry.yarnpkg.com",                      # npm
    "deb.debian.org", "security.debian.org", "archive.ubuntu.com",     # apt
    "security.ubuntu.com", "ports.ubuntu.com",
    "crates.io", "index.crates.io", "static.crates.io",                # cargo
    "rubygems.org", "index.rubygems.org",                              # gem
    "proxy.golang.org", "sum.golang.org", "storage.googleapis.com",    # go
)
# The folders at the root a session's commands see: what programs need to run. Every
# other folder there (home folders, a checkout in /work, a data disk in /srv or /data,
# another service's folder) is hidden whole, and so is every folder in /var: the host's
# data is whatever is not known to be system, never a list of the places data is known
# to be. (/run and /tmp are listed here but hidden whole as shared places.)
SYSTEM_ROOTS = frozenset({"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc",
                          "opt", "nix", "gnu", "snap", "var", "dev", "proc", "sys", "run",
                          "tmp"})
# The host's secrets in /etc, a system folder otherwise shown (programs read it).
HOST_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh",
                "/etc/ssl/private")
# Version managers whose PATH folders (shims) run scripts elsewhere in their folder.
VERSION_MANAGERS = frozenset({".pyenv", ".rbenv", ".nodenv", ".asdf", ".cargo", ".rustup",
                              ".nvm", ".volta", ".bun", ".deno", ".sdkman", ".goenv"})
# What a command's environment keeps of the service's: how to find programs and speak.
_KEPT_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TZ")


class ServeLimits:
    """Per session: processes, memory (MB) and CPUs; per command: CPU seconds and the
    size of one file written (MB)."""

    __slots__ = ("command_cpu_seconds", "cpus", "file_mb", "memory_mb", "processes")

    def __init__(self, *, processes: int = 256, memory_mb: int = 2048, cpus: float = 1.0,
                 command_cpu_seconds: int = 600, file_mb: int = 1024) -> None:
        self.processes = processes
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.command_cpu_seconds = command_cpu_seconds
        self.file_mb = file_mb

    def __repr__(self) -> str:
        return (f"ServeLimits(processes={self.processes}, memory_mb={self.memory_mb}, "
                f"cpus={self.cpus}, command_cpu_seconds={self.command_cpu_seconds}, "
                f"file_mb={self.file_mb})")


class Housing:
    """Where served sessions live (`data_dir`: their workspaces), the store file their
    commands must not see (SQLite; None for PostgreSQL), and their limits."""

    __slots__ = ("data_dir", "limits", "store_file")

    def __init__(self, data_dir: Path, *, store_file: str | None = None,
                 limits: ServeLimits | None = None) -> None:
        self.data_dir = data_dir
        self.store_file = store_file
        self.limits = limits if limits is not None else ServeLimits()

    def __repr__(self) -> str:
        return f"Housing({self.data_dir!r}, store_file={self.store_file!r}, {self.limits!r})"

    def workspace(self, session_id: str) -> Path:
        """The session's workspace, made (owner-only) if new."""
        folder = self.data_dir / "workspaces" / session_id
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder

    def sandbox(self, workspace: Path, env: Mapping[str, str], environment: JSON | None
                ) -> CommandSandbox:
        return session_sandbox(workspace, data_dir=self.data_dir, env=env,
                               environment=environment, limits=self.limits,
                               store=self.store_file)


def egress_hosts(environment: JSON | None) -> tuple[str, ...]:
    """The hosts a session's commands may reach, from its environment's `networking`
    (`*`: any public host, `NetworkPolicy.any_public_host`)."""
    config = (environment or {}).get("config") or {}
    networking = config.get("networking") or {"type": "unrestricted"}
    if config.get("type") == "self_hosted" or networking.get("type") == "unrestricted":
        return ("*",)
    hosts = [_host_of(h) for h in networking.get("allowed_hosts") or []]
    if networking.get("allow_package_managers"):
        hosts += PACKAGE_HOSTS
    return tuple(dict.fromkeys(h for h in hosts if h))


def _host_of(entry: object) -> str:
    """`api.example.com` from `https://api.example.com:443/v1` or the bare name."""
    text = str(entry).strip()
    if "://" not in text:
        text = "//" + text
    try:
        return (urlsplit(text).hostname or "").lower()
    except ValueError:
        return ""


def command_env(workspace: Path, env: Mapping[str, str]) -> dict[str, str]:
    """A fresh environment for the session's commands (see the module doc)."""
    fresh = {k: env[k] for k in _KEPT_VARIABLES if env.get(k)}
    fresh.update({k: v for k, v in env.items() if k.startswith("LC_")})
    fresh.setdefault("PATH", os.defpath)
    fresh.update({"HOME": str(workspace), "USER": "wisp", "LOGNAME": "wisp",
                  "SHELL": "/bin/bash", "TERM": "dumb"})
    return fresh


def hidden_places(data_dir: Path, env: Mapping[str, str], store: str | None,
                  temp_dir: str) -> list[str]:
    """Everything of the host's data a session's commands must not see. `temp_dir` is
    the session's own, whose parent holds every session's (re-bound for this one)."""
    from wisp.sandbox.session import config_folders, shared_places

    home = env.get("HOME") or os.path.expanduser("~")
    places = [str(data_dir), home, *HOST_SECRETS, *unknown_folders("/", SYSTEM_ROOTS),
              *unknown_folders("/var", frozenset()), *config_folders(env, home),
              *shared_places(env, all_sockets=False), os.path.dirname(temp_dir)]
    if store:
        places.append(os.path.dirname(store))
    cwd = os.getcwd()
    if cwd.count("/") >= 2 and not cwd.startswith(("/usr/", "/opt/")):
        places.append(cwd)  # the service's own folder (its checkout, its configuration)
    return [p for p in dict.fromkeys(os.path.realpath(p) for p in places) if p != "/"]


def unknown_folders(parent: str, known: frozenset[str]) -> list[str]:
    """The real folders in `parent` not named in `known`. A link is left alone: what it
    names is shown or hidden where it really is."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    return [e.path for e in entries
            if e.name not in known and e.is_dir(follow_symlinks=False)]


def granted_back(hidden: Sequence[str], env: Mapping[str, str], secret: Sequence[str]
                 ) -> list[str]:
    """The interpreter's installation and the PATH folders that live in a hidden place,
    read-only, so programs run (a version manager's whole folder, whose shims run its
    own scripts); never one that holds a `secret` folder. Credential stores inside stay
    hidden (`wisp.sandbox.view`)."""
    wanted = [sys.prefix, sys.base_prefix]
    for entry in (env.get("PATH") or os.defpath).split(os.pathsep):
        wanted.append(_tool_root(entry) or entry)
    grants = []
    for path in wanted:
        real = os.path.realpath(path) if path else ""
        if not real or real == "/" or not os.path.isdir(real):
            continue
        if not any(_inside(real, h) for h in hidden):
            continue
        if any(_inside(s, real) for s in secret):
            continue  # e.g. PATH naming the home folder itself
        grants.append(real)
    return list(dict.fromkeys(grants))


def _tool_root(entry: str) -> str | None:
    """`~/.pyenv` for `~/.pyenv/shims` or `~/.pyenv/plugins/x/shims`: the folder of a
    version manager a PATH entry belongs to."""
    parts = entry.rstrip("/").split("/")
    for i, part in enumerate(parts):
        if part in VERSION_MANAGERS:
            return "/".join(parts[:i + 1])
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def sandbox_config(environment: JSON | None) -> SandboxConfig:
    config = SandboxConfig()
    config.enabled = True
    config.auto_allow = True  # every command is confined: a question would add nothing
    config.allow_unsandboxed = False  # `dangerouslyDisableSandbox` is ignored
    config.fail_if_unavailable = True
    config.network.allowed_domains = egress_hosts(environment)
    return config


def session_sandbox(workspace: Path, *, data_dir: Path, env: Mapping[str, str],
                    environment: JSON | None, limits: ServeLimits,
                    store: str | None = None) -> CommandSandbox:
    """The sandbox every command of one served session runs in."""
    from wisp.sandbox.cgroups import controller_roots
    from wisp.sandbox.netgate import policy_fields
    from wisp.sandbox.probe import probe
    from wisp.sandbox.runner import new_temp_dir
    from wisp.sandbox.session import started

    config = sandbox_config(environment)
    found = probe(env)
    roots, _missing = controller_roots("pids", "memory", "cpu")
    temp_dir = new_temp_dir()
    hidden = hidden_places(data_dir, env, store, temp_dir)
    home = env.get("HOME") or os.path.expanduser("~")
    secret = [str(data_dir), home, *((store and [os.path.dirname(store)]) or [])]
    profile = SandboxProfile(
        writable=(str(workspace),), temp_dir=temp_dir, home=home, hide=hidden,
        allow_read=granted_back(hidden, env, secret),
        limits=Limits(limits.processes, limits.file_mb,
                      cpu_seconds=limits.command_cpu_seconds,
                      memory_mb=None if "memory" in roots else limits.memory_mb))
    cgroup_limits = {"pids": float(limits.processes),
                     "memory": float(limits.memory_mb) * 1024 * 1024, "cpu": limits.cpus}
    sandbox = CommandSandbox(config, profile, found, confinement=Confinement(
        command_env(workspace, env), roots, cgroup_limits))
    fields = policy_fields(config.network, (), ())
    if fields["allowed_domains"] == ("*",):
        fields.update(allowed_domains=(), any_public_host=True)
    return started(sandbox, fields)


def workspace_rules(workspace: Path) -> tuple[str, ...]:
    """What a cloud session's toolset is granted: its workspace, never a bare rule. Bash
    needs none: every command runs in the session's sandbox, which allows it."""
    root = os.path.realpath(workspace)
    return (f"Read(/{root}/**)", f"Edit(/{root}/**)")
