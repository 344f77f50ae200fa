"""Saying which sandbox is in force: `system/init` before the engine loads, and
`wisp sandbox check`, which prints the probe and fails when the sandbox is on but
nothing here can enforce it.

Above: print mode's early init and the CLI. Below: settings, the probe.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.sandbox.config import SandboxConfig, sandbox_config, sandbox_enabled

if TYPE_CHECKING:
    from wisp.sandbox.probe import Probe
    from wisp.settings.loader import Settings

USAGE = "usage: wisp sandbox check [--settings <file or json>] [--json]\n"


def status_fields(config: SandboxConfig, probe: Probe, *, network: str = "none") -> JSON:
    """The `sandbox` field of `system/init` and what /status shows."""
    mechanism = probe.mechanism
    fields: JSON = {"enabled": config.enabled, "mechanism": mechanism,
                    "enforcing": mechanism != "none",
                    "autoAllowBashIfSandboxed": config.auto_allow and mechanism == "bubblewrap",
                    "network": network}
    if mechanism != "bubblewrap":
        fields["reason"] = probe.why_not()
    return fields


def early_status(settings: Settings, env: Mapping[str, str]) -> JSON | None:
    """The `sandbox` field of `system/init` (None when the sandbox is off)."""
    if not sandbox_enabled(settings):
        return None
    import importlib.util

    from wisp.sandbox.probe import probe

    config = sandbox_config(settings)
    # Whether the network module is installed, without loading it (or netgate) yet.
    network = importlib.util.find_spec("wisp.sandbox.network") is not None
    return status_fields(config, probe(env, weaker_nested=config.weaker_nested),
                         network="proxy" if network else "none")


def _lines(config: SandboxConfig, found: Probe) -> list[str]:
    bwrap = found.bwrap
    if bwrap.works:
        extras = ", ".join(x for x in ("--disable-userns" if bwrap.disable_userns else "",
                                       "host /proc (weaker)" if bwrap.weak_proc else
                                       "fresh /proc") if x)
        bwrap_line = f"works: {bwrap.path} ({bwrap.version or 'version unknown'}; {extras})"
    else:
        bwrap_line = f"unusable: {bwrap.error}"
    landlock = (f"ABI {found.landlock_abi}" if found.landlock_abi else
                f"unavailable: {found.landlock_error}")
    processes = (f"pids cgroup under {found.pids_cgroup} ({config.max_processes})"
                 if found.pids_cgroup else
                 f"RLIMIT_NPROC {config.max_processes} ({found.pids_error})")
    in_force = {"bubblewrap": "bubblewrap (namespaces, masks, pid namespace, no network)",
                "landlock": "Landlock (writes confined; no masks, no pid namespace)",
                "none": "none: sandboxed commands are refused"}[found.mechanism]
    return [f"Settings:   sandbox {'on' if config.enabled else 'off'}",
            f"bubblewrap: {bwrap_line}", f"Landlock:   {landlock}",
            f"Processes:  {processes}; files up to {config.max_file_mb} MB",
            f"In force:   {in_force}"]


def run_check(argv: list[str]) -> int:
    """`wisp sandbox check`: 1 when the sandbox is on and cannot be enforced here."""
    from wisp.sandbox.probe import probe
    from wisp.settings.loader import load_settings, warn_about

    args, flag, as_json = list(argv), None, False
    if not args or args[0] != "check":
        sys.stderr.write(USAGE)
        return 2
    args.pop(0)
    while args:
        arg = args.pop(0)
        if arg == "--json":
            as_json = True
        elif arg == "--settings" and args:
            flag = args.pop(0)
        else:
            sys.stderr.write(USAGE)
            return 2
    settings = load_settings(Path.cwd(), os.environ, selected=None, flag=flag)
    warn_about(settings)
    config = sandbox_config(settings)
    found = probe(os.environ, weaker_nested=config.weaker_nested)
    failing = config.enabled and found.mechanism == "none"
    if as_json:
        sys.stdout.write(json.dumps(status_fields(config, found)) + "\n")
    else:
        sys.stdout.write("\n".join(_lines(config, found)) + "\n")
    return 1 if failing else 0
