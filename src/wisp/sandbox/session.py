"""Builds a session's `CommandSandbox` from its settings, folders and permission rules.

Above: the runtime (once per session, when `sandbox.enabled`). Below: the probe, the
profile and the network module's gate. The permission rules are read again for every
command (`rules`), so a Read deny rule added while the session runs hides its path from
the next command on.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wisp.rules import EDIT_FAMILY, READ_FAMILY, Rule, rule_path_pattern
from wisp.sandbox.config import SandboxConfig
from wisp.sandbox.netgate import network_setup, policy_fields
from wisp.sandbox.probe import probe
from wisp.sandbox.profile import Limits, SandboxProfile
from wisp.sandbox.runner import CommandSandbox, close_all, new_temp_dir, temp_root

_EXIT_HOOKED = False


def config_folders(env: Mapping[str, str], home: str) -> list[str]:
    """wisp's and Claude Code's configuration (settings, transcripts of every session,
    credentials): hidden from sandboxed commands wherever they are."""
    from wisp.paths import config_dir

    folders = [str(config_dir(env)), os.path.join(home, ".claude"),
               os.path.join(home, ".wisp"), os.path.join(home, ".config", "wisp"),
               os.path.join(home, ".claude.json")]
    folders += [env[k] for k in ("WISP_CONFIG_DIR", "CLAUDE_CONFIG_DIR") if env.get(k)]
    return list(dict.fromkeys(os.path.realpath(os.path.expanduser(f)) for f in folders))


def shared_places(env: Mapping[str, str], *, all_sockets: bool) -> list[str]:
    """Folders every process on the host shares, hidden whole: temp folders (other users'
    and sessions' files, and Unix sockets such as tmux's or ssh-agent's, which a read-only
    mount does not stop anyone connecting to) and, unless `allowAllUnixSockets`, the
    runtime folders where service sockets live (docker, D-Bus, the user's session)."""
    places = ["/tmp", "/var/tmp", temp_root()]
    if not all_sockets:
        places += ["/run", "/var/run"]
        places += [env[k] for k in ("XDG_RUNTIME_DIR",) if env.get(k)]
        if env.get("SSH_AUTH_SOCK"):
            places.append(os.path.dirname(env["SSH_AUTH_SOCK"]))
    return [p for p in dict.fromkeys(places) if p and p != "/"]


def _paths(values: Sequence[str], cwd: Path) -> tuple[str, ...]:
    return tuple(rule_path_pattern(v, cwd) for v in values)


def rule_patterns(rules: Callable[[], Sequence[Rule]], cwd: Path
                  ) -> Callable[[], tuple[list[str], list[str]]]:
    """(Read deny patterns, Edit deny patterns) of the session's deny rules, now."""
    def patterns() -> tuple[list[str], list[str]]:
        read, write = [], []
        for rule in rules():
            if rule.content is None or rule.content.startswith("domain:"):
                continue
            if rule.family == READ_FAMILY:
                read.append(rule_path_pattern(rule.content, cwd))
            elif rule.family == EDIT_FAMILY:
                write.append(rule_path_pattern(rule.content, cwd))
        return read, write

    return patterns


def build_profile(config: SandboxConfig, cwd: Path, working: Sequence[str],
                  env: Mapping[str, str]) -> SandboxProfile:
    home = env.get("HOME") or os.path.expanduser("~")
    temp = new_temp_dir()
    wisp_temp = os.path.dirname(temp)  # every session's tool output: hidden, ours re-bound
    return SandboxProfile(
        writable=tuple(dict.fromkeys((*working, *_paths(config.allow_write, cwd)))),
        temp_dir=temp, home=home,
        hide=(*config_folders(env, home), wisp_temp,
              *shared_places(env, all_sockets=config.network.allow_all_unix_sockets)),
        deny_read=_paths(config.deny_read, cwd), deny_write=_paths(config.deny_write, cwd),
        # Granted back on top of what is hidden: `filesystem.allowRead`, and the sockets
        # `network.allowUnixSockets` names (their folders are hidden above).
        allow_read=(*_paths(config.allow_read, cwd),
                    *_paths(config.network.allow_unix_sockets, cwd)),
        limits=Limits(config.max_processes, config.max_file_mb))


def build_sandbox(config: SandboxConfig, *, cwd: Path, working: Sequence[str],
                  env: Mapping[str, str], allow: Callable[[], Sequence[Rule]],
                  deny: Callable[[], Sequence[Rule]]) -> CommandSandbox:
    """One session's sandbox. `allow`/`deny` return the session's current rules."""
    found = probe(env, weaker_nested=config.weaker_nested)
    profile = build_profile(config, cwd, working, env)
    sandbox = CommandSandbox(config, profile, found, rules=rule_patterns(deny, cwd))
    return started(sandbox, policy_fields(config.network, allow(), deny()))


def started(sandbox: CommandSandbox, network: dict[str, Any]) -> CommandSandbox:
    """What every session's sandbox needs once made (a CLI session's or a served
    one's): closing at exit, the sweep of dead processes' leftovers, and its network
    gate for the `NetworkPolicy` fields `network`."""
    global _EXIT_HOOKED
    if not _EXIT_HOOKED:
        _EXIT_HOOKED = True
        atexit.register(close_all)
    from wisp.sandbox.sweep import sweep

    temp_dir = sandbox.profile.temp_dir
    sweep(os.path.dirname(temp_dir), sandbox.probe.pids_cgroup)
    run_dir = temp_dir + "-run"  # the network gate's sockets, outside the view
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    sandbox.network = network_setup(network, run_dir, sandbox.refused_host)
    return sandbox
