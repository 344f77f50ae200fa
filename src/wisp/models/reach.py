"""Why a model endpoint could not be reached, in words a user can act on.

Above: a provider (`wisp.models.anthropic`, `wisp.models.openai.provider`) that failed to
connect names its URL and the setting the URL came from; the engine shows `message` with
each retry and `hint` once it gives up. Below: `Unreachable` from `wisp.models.pool`,
which knows only the kind of failure.
"""

from __future__ import annotations

from wisp.errors import Unreachable
from wisp.models.pool import parse_url


def explained(exc: Unreachable, url: str, setting: str | None) -> Unreachable:
    """`exc` for a request to `url`, whose base came from `setting` (a variable or a
    settings key; None for the built-in default)."""
    try:
        parsed = parse_url(url)
    except ValueError:
        return exc
    endpoint = f"{parsed.scheme}://{parsed.authority}"
    return Unreachable(f"cannot reach {endpoint} ({exc.reason})", cause=exc.cause,
                       reason=exc.reason, endpoint=endpoint,
                       hint=hint(exc.cause, exc.reason, endpoint, parsed.host, setting),
                       reached_before=exc.reached_before)


_HINTS = {
    "refused": "nothing listens at {endpoint} (connection refused) — is {setting} right?",
    "refused-default": ("{endpoint} refused the connection (connection refused) — a "
                        "firewall, or a proxy wisp should use (HTTPS_PROXY)?"),
    "dns": "cannot resolve {host} ({reason}) — offline{wrong}",
    "timeout": "cannot reach {endpoint} ({reason}) — offline or behind a firewall{wrong}",
    "network": "cannot reach {endpoint} ({reason}) — offline or behind a firewall{wrong}",
    "tls": ("TLS with {endpoint} failed ({reason}) — a plain-http server behind an "
            "https:// URL{in_setting}, or a proxy that intercepts TLS (point SSL_CERT_FILE "
            "at its certificate)?"),
    "proxy": ("cannot reach {endpoint} through the proxy: {reason} — is HTTPS_PROXY "
              "(or HTTP_PROXY) right?"),
    "other": "cannot reach {endpoint} ({reason}){check}",
}


def hint(cause: str, reason: str, endpoint: str, host: str, setting: str | None) -> str:
    """One line: the endpoint, the likely cause, and what to check."""
    if cause == "refused" and setting is None:
        cause = "refused-default"  # the built-in URL: the address is not what is wrong
    return _HINTS.get(cause, _HINTS["other"]).format(
        endpoint=endpoint, host=host, reason=reason, setting=setting,
        wrong=f", or is {setting} wrong?" if setting else "?",
        check=f" — is {setting} right?" if setting else "",
        in_setting=f" ({setting})" if setting else "")
