"""API keys for `wisp serve`: who may call it, and which owner a request acts for.

    keys = ApiKeys.from_env(os.environ)      # WISP_SERVE_API_KEYS="k1,k2"
    refuse_open(host, keys)                  # UsageError: no keys on a public address
    owner = keys.owner_of(request.headers)   # None: answer 401

A request names its key in `x-api-key: K` (what the `anthropic` SDK sends) or in
`Authorization: Bearer K`; when both are present `x-api-key` decides. The owner is a hash
of the key, so resources can be tied to a key without the store ever holding one, and it
is stable across restarts. With no keys configured (allowed on loopback only) every
request, whatever key it carries, acts as the one owner `ANONYMOUS`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Mapping

from wisp.errors import UsageError

__all__ = ["ANONYMOUS", "ENV_VAR", "ApiKeys", "is_loopback", "owner_for", "refuse_open"]

ENV_VAR = "WISP_SERVE_API_KEYS"
ANONYMOUS = "anonymous"

# Domain-separated so an owner id is not the plain sha256 of the key (which a key's
# other uses might also publish), and 96 bits so two keys never share an owner.
_OWNER_SALT = b"wisp serve owner\0"
_OWNER_HEX = 24


def owner_for(key: str) -> str:
    """The owner id of `key`: a sha256 hex prefix, never the key itself."""
    return hashlib.sha256(_OWNER_SALT + key.encode()).hexdigest()[:_OWNER_HEX]


class ApiKeys:
    """The keys a server accepts. Only their digests are kept in memory."""

    __slots__ = ("_digests",)

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._digests: dict[bytes, str] = {
            hashlib.sha256(key.encode()).digest(): owner_for(key) for key in keys if key
        }

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ApiKeys:
        """Keys from `WISP_SERVE_API_KEYS` in `env`: comma-separated, blanks ignored."""
        raw = env.get(ENV_VAR, "")
        return cls([part.strip() for part in raw.split(",") if part.strip()])

    @property
    def configured(self) -> bool:
        return bool(self._digests)

    def __len__(self) -> int:
        return len(self._digests)

    def owner_of(self, headers: Mapping[str, str]) -> str | None:
        """The owner the request acts for, or None when it must be refused (401)."""
        if not self._digests:
            return ANONYMOUS
        key = presented_key(headers)
        if key is None:
            return None
        return self._match(key)

    def _match(self, key: str) -> str | None:
        # Compare digests, not keys: equal-length inputs for compare_digest, and every
        # configured key is compared so the time taken does not say which one matched.
        digest = hashlib.sha256(key.encode()).digest()
        found: str | None = None
        for known, owner in self._digests.items():
            if hmac.compare_digest(digest, known):
                found = owner
        return found


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries (`x-api-key`, else `Authorization: Bearer`), if any."""
    key = headers.get("x-api-key")
    if key is not None:
        return key.strip() or None
    auth = headers.get("authorization")
    if auth is None:
        return None
    scheme, _, token = auth.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refuse_open(host: str, keys: ApiKeys) -> None:
    """Raises UsageError when `host` is reachable from other machines and no key guards it."""
    if keys.configured or is_loopback(host):
        return
    raise UsageError(
        f"wisp serve: refusing to listen on {host or '(all interfaces)'} without "
        f"{ENV_VAR} (anyone who can reach it could run agents). Set {ENV_VAR} to one or "
        "more comma-separated keys, or listen on 127.0.0.1."
    )
