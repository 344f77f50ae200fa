"""Where the sandbox's two halves meet: the session's network policy, and the network
module (`wisp.sandbox.network`: filtering proxy, bridge into the network namespace,
seccomp program) when it is installed.

Above: `CommandSandbox`, which adds the jail's options, environment and fds to each
bubblewrap run, and the runtime, which derives the policy from settings and permission
rules. Below: `wisp.sandbox.network`'s `NetworkPolicy`, `NetworkGate` and
`seccomp_program`, looked up at run time. Without that module a sandboxed command still
runs in an empty network namespace (`--unshare-net`): no egress at all, which is what an
empty allow-list means anyway; `status` reports `network: "none"`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from wisp.rules import Rule
from wisp.sandbox.config import NetworkSettings

NETWORK_MODULE = "wisp.sandbox.network"


class Jail(Protocol):
    """`wisp.sandbox.network.NetworkJail`."""

    @property
    def bwrap_args(self) -> tuple[str, ...]: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def pass_fds(self) -> tuple[int, ...]: ...
    @property
    def wrap(self) -> Callable[[list[str]], list[str]]: ...


def _domains(rules: Sequence[Rule]) -> tuple[str, ...]:
    """Hosts named by `WebFetch(domain:…)` rules: the reference lets sandboxed commands
    reach what WebFetch may fetch."""
    return tuple(r.content.removeprefix("domain:").strip() for r in rules
                 if r.tool == "WebFetch" and r.content and r.content.startswith("domain:"))


def policy_fields(net: NetworkSettings, allow: Sequence[Rule], deny: Sequence[Rule]
                  ) -> dict[str, Any]:
    """The keyword arguments of `NetworkPolicy` for a session."""
    return {
        "allowed_domains": tuple(dict.fromkeys((*net.allowed_domains, *_domains(allow)))),
        "denied_domains": tuple(dict.fromkeys((*net.denied_domains, *_domains(deny)))),
        "allow_local_binding": net.allow_local_binding,
        "allow_unix_sockets": net.allow_unix_sockets,
        "allow_all_unix_sockets": net.allow_all_unix_sockets,
        "http_proxy_port": net.http_proxy_port,
        "socks_proxy_port": net.socks_proxy_port,
    }


class NetworkSetup:
    """The session's gate (a proxy started on first need) and seccomp program."""

    def __init__(self, module: Any, gate: Any, allow_unix: bool) -> None:
        self._module = module
        self._gate = gate
        self._allow_unix = allow_unix

    def jail(self) -> Jail:
        jail: Jail = self._gate.jail()
        return jail

    def seccomp(self, *, allow_network: bool = True) -> bytes:
        """`allow_network=False` where no network namespace holds the command (the
        Landlock fallback): there the program itself must refuse every network socket."""
        program: bytes = self._module.seccomp_program(allow_unix_sockets=self._allow_unix,
                                                      allow_network=allow_network)
        return program

    @property
    def egress(self) -> str:
        """"none", "proxy" or "unavailable: <why>", as the gate knows it."""
        return str(self._gate.egress)

    def close(self) -> None:
        self._gate.close()


def network_setup(fields: dict[str, Any], runtime_dir: str,
                  on_violation: Callable[[str], None]) -> NetworkSetup | None:
    """None when the network module is not installed (see the module doc)."""
    try:
        module = importlib.import_module(NETWORK_MODULE)
    except ImportError:
        return None
    policy = module.NetworkPolicy(**fields)
    gate = module.NetworkGate(policy, runtime_dir=Path(runtime_dir), on_violation=on_violation)
    allow_unix = bool(fields["allow_all_unix_sockets"] or fields["allow_unix_sockets"])
    return NetworkSetup(module, gate, allow_unix)
