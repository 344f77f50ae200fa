"""`sandbox` in settings: the merged view a session uses (validation of one document is
`wisp.settings.sandbox_schema`, below the settings loader).

Above: the runtime (which builds a sandbox from the merged view). Below: the settings
documents.

Merging: scalars take the value of the highest-ranked source that sets them; lists are
joined across sources. Keys that loosen the sandbox (`excludedCommands`,
`filesystem.allowRead`/`allowWrite`, `network.allowUnixSockets`/`allowAllUnixSockets`/
`allowLocalBinding`/`allowedDomains` and the proxy ports, `enableWeakerNestedSandbox`) are
honoured only from user settings and `--settings` (what an SDK's `sandbox` option becomes),
and so are `enabled: false` and `allowUnsandboxedCommands: true`: a repository's
`.claude/settings*.json` can turn the sandbox on or tighten it, never switch its own
confinement off. Such values are dropped with a warning that names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.settings.loader import Settings

TRUSTED_SOURCES = frozenset({"user", "flag"})
DEFAULT_MAX_PROCESSES = 1024
DEFAULT_MAX_FILE_MB = 2048

# Loosening keys, as (section, key); section "" is the top of `sandbox`.
_LOOSENING = (("", "excludedCommands"), ("", "enableWeakerNestedSandbox"),
              ("filesystem", "allowRead"), ("filesystem", "allowWrite"),
              ("network", "allowUnixSockets"), ("network", "allowAllUnixSockets"),
              ("network", "allowLocalBinding"), ("network", "allowedDomains"),
              ("network", "httpProxyPort"), ("network", "socksProxyPort"))
# Accepted for the SDKs' sake, with nothing to do on Linux or not implemented: a warning
# says so rather than silently pretending.
_UNSUPPORTED = (("network", "allowMachLookup"), ("network", "tlsTerminate"),
                ("", "credentials"), ("network", "allowManagedDomainsOnly"),
                ("network", "strictAllowlist"), ("filesystem", "allowManagedReadPathsOnly"),
                ("filesystem", "disabled"))


class NetworkSettings:
    """`sandbox.network`, merged."""

    __slots__ = ("allow_all_unix_sockets", "allow_local_binding", "allow_unix_sockets",
                 "allowed_domains", "denied_domains", "http_proxy_port", "socks_proxy_port")

    def __init__(self) -> None:
        self.allow_local_binding = False
        self.allow_all_unix_sockets = False
        self.allow_unix_sockets: tuple[str, ...] = ()
        self.allowed_domains: tuple[str, ...] = ()
        self.denied_domains: tuple[str, ...] = ()
        self.http_proxy_port: int | None = None
        self.socks_proxy_port: int | None = None


class SandboxConfig:
    """What every settings source says about the sandbox, merged (see the module doc).
    `dropped` lists loosening values a repository's settings tried to set."""

    __slots__ = ("allow_read", "allow_unsandboxed", "allow_write", "auto_allow", "deny_read",
                 "deny_write", "dropped", "enabled", "excluded_commands",
                 "fail_if_unavailable", "ignore_violations", "max_file_mb", "max_processes",
                 "network", "unsupported", "weaker_nested")

    def __init__(self) -> None:
        self.enabled = False
        self.auto_allow = False
        self.allow_unsandboxed = True
        self.weaker_nested = False
        self.fail_if_unavailable = False
        self.excluded_commands: tuple[str, ...] = ()
        self.allow_read: tuple[str, ...] = ()
        self.deny_read: tuple[str, ...] = ()
        self.allow_write: tuple[str, ...] = ()
        self.deny_write: tuple[str, ...] = ()
        self.network = NetworkSettings()
        self.ignore_violations: dict[str, tuple[str, ...]] = {}
        self.max_processes = DEFAULT_MAX_PROCESSES
        self.max_file_mb = DEFAULT_MAX_FILE_MB
        self.dropped: list[str] = []
        self.unsupported: list[str] = []


def _trusted_only(doc: JSON, source: str, config: SandboxConfig) -> JSON:
    """`doc` without the loosening keys when `source` is a repository's settings."""
    if source in TRUSTED_SOURCES:
        return doc
    kept = {k: (dict(v) if isinstance(v, dict) else v) for k, v in doc.items()}
    # Switching off what user settings or the launch switched on is loosening too.
    for key, loose in (("enabled", False), ("allowUnsandboxedCommands", True)):
        if kept.get(key) is loose:
            del kept[key]
            config.dropped.append(f"sandbox.{key}: {str(loose).lower()} ({source} settings)")
    for section, key in _LOOSENING:
        holder = kept if not section else kept.get(section)
        if isinstance(holder, dict) and key in holder:
            del holder[key]
            config.dropped.append(f"sandbox.{section + '.' if section else ''}{key} "
                                  f"({source} settings)")
    return kept


_SCALARS = {"enabled": "enabled", "autoAllowBashIfSandboxed": "auto_allow",
            "allowUnsandboxedCommands": "allow_unsandboxed",
            "enableWeakerNestedSandbox": "weaker_nested",
            "failIfUnavailable": "fail_if_unavailable"}


def _merge_one(doc: JSON, config: SandboxConfig) -> None:
    """Applies one source over the lower-ranked ones already merged."""
    for key, attr in _SCALARS.items():
        if isinstance(doc.get(key), bool):
            setattr(config, attr, doc[key])
    config.excluded_commands += tuple(doc.get("excludedCommands") or ())
    fs = doc.get("filesystem") or {}
    for key, attr in (("allowRead", "allow_read"), ("denyRead", "deny_read"),
                      ("allowWrite", "allow_write"), ("denyWrite", "deny_write")):
        setattr(config, attr, getattr(config, attr) + tuple(fs.get(key) or ()))
    _merge_network(doc.get("network") or {}, config.network)
    for pattern, texts in (doc.get("ignoreViolations") or {}).items():
        config.ignore_violations[pattern] = (*config.ignore_violations.get(pattern, ()), *texts)
    limits = doc.get("limits") or {}
    config.max_processes = limits.get("processes", config.max_processes)
    config.max_file_mb = limits.get("fileSizeMB", config.max_file_mb)
    for section, key in _UNSUPPORTED:
        holder = doc if not section else doc.get(section) or {}
        if key in holder:
            config.unsupported.append(f"sandbox.{section + '.' if section else ''}{key}")


def _merge_network(net: JSON, into: NetworkSettings) -> None:
    into.allow_local_binding = net.get("allowLocalBinding", into.allow_local_binding)
    into.allow_all_unix_sockets = net.get("allowAllUnixSockets", into.allow_all_unix_sockets)
    into.allow_unix_sockets += tuple(net.get("allowUnixSockets") or ())
    into.allowed_domains += tuple(net.get("allowedDomains") or ())
    into.denied_domains += tuple(net.get("deniedDomains") or ())
    into.http_proxy_port = net.get("httpProxyPort", into.http_proxy_port)
    into.socks_proxy_port = net.get("socksProxyPort", into.socks_proxy_port)


def sandbox_config(settings: Settings) -> SandboxConfig:
    """The merged `sandbox` of every loaded source (validated already by the loader)."""
    from wisp.settings.loader import SOURCE_RANK

    config = SandboxConfig()
    for source in sorted(settings.sources, key=lambda s: SOURCE_RANK[s.name]):
        doc = source.doc.get("sandbox")
        if isinstance(doc, dict):
            _merge_one(_trusted_only(doc, source.name, config), config)
    if any(error.get("sandbox_enabled") for error in settings.errors):
        config.enabled = True  # fail closed: the skipped file asked for the sandbox
    return config


def sandbox_enabled(settings: Settings) -> bool:
    """Cheap: whether any source turns the sandbox on (the highest that says decides)."""
    if not any(isinstance(s.doc.get("sandbox"), dict) for s in settings.sources) and not any(
            error.get("sandbox_enabled") for error in settings.errors):
        return False
    return sandbox_config(settings).enabled


def warn_about(config: SandboxConfig) -> None:
    from wisp.diagnostics import warn

    for what in config.dropped:
        warn(f"wisp: warning: ignoring {what}: only user settings and --settings may loosen "
             "the sandbox\n")
    for what in dict.fromkeys(config.unsupported):
        warn(f"wisp: warning: {what} is not supported by wisp's sandbox and has no effect\n")
