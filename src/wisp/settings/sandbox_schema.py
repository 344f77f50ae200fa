"""`sandbox` in a settings document: is it well formed? The settings validator asks;
the merged view a session uses is `wisp.sandbox.config`, which sits above settings.

Import-light: validation runs on the `-p` hot path whenever a settings file has a
`sandbox` key.
"""

from __future__ import annotations

from typing import Any

from wisp.jsontypes import JSON

_BOOLS = ("enabled", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands",
          "enableWeakerNestedSandbox", "failIfUnavailable")
_NET_BOOLS = ("allowLocalBinding", "allowAllUnixSockets")
_NET_LISTS = ("allowUnixSockets", "allowedDomains", "deniedDomains")
_NET_PORTS = ("httpProxyPort", "socksProxyPort")
_FS_LISTS = ("allowRead", "denyRead", "allowWrite", "denyWrite")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_section(doc: JSON, where: str, bools: tuple[str, ...], lists: tuple[str, ...],
                   ports: tuple[str, ...] = ()) -> list[str]:
    problems = [f"{where}.{k} must be true or false" for k in bools
                if k in doc and not isinstance(doc[k], bool)]
    problems += [f"{where}.{k} must be a list of strings" for k in lists
                 if k in doc and not _strings(doc[k])]
    problems += [f"{where}.{k} must be a port number" for k in ports if k in doc and not (
        isinstance(doc[k], int) and not isinstance(doc[k], bool) and 0 < doc[k] < 65536)]
    return problems


def _check_ignore(value: Any) -> list[str]:
    if not isinstance(value, dict) or not all(_strings(v) for v in value.values()):
        return ["sandbox.ignoreViolations must be an object of string lists"]
    return []


def _check_limits(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return ["sandbox.limits must be an object"]
    return [f"sandbox.limits.{k} must be a positive integer"
            for k in ("processes", "fileSizeMB") if k in value and not (
                isinstance(value[k], int) and not isinstance(value[k], bool) and value[k] > 0)]


def check_sandbox(value: Any) -> list[str]:
    """Problems with one settings document's `sandbox` value; empty means valid."""
    if not isinstance(value, dict):
        return ["sandbox must be an object"]
    problems = _check_section(value, "sandbox", _BOOLS, ("excludedCommands",))
    for name, bools, lists, ports in (("network", _NET_BOOLS, _NET_LISTS, _NET_PORTS),
                                      ("filesystem", (), _FS_LISTS, ())):
        section = value.get(name)
        if name in value and not isinstance(section, dict):
            problems.append(f"sandbox.{name} must be an object")
        elif isinstance(section, dict):
            problems += _check_section(section, f"sandbox.{name}", bools, lists, ports)
    if "ignoreViolations" in value:
        problems += _check_ignore(value["ignoreViolations"])
    if "limits" in value:
        problems += _check_limits(value["limits"])
    return problems
