"""Vault secrets encrypted at rest: AES-256-GCM under a key the operator supplies.

The key is `WISP_SERVE_VAULT_KEY`: 32 random bytes, as 64 hexadecimal characters or in
base64 (`openssl rand -base64 32`). It is read from the service's environment each time
a secret is sealed or opened, by the API process (which seals) and by the workers (which
open, to authenticate MCP servers); it is never stored. Without it no credential can be
created: a secret is never kept in plain text.

A sealed secret is `v1:` and the base64 of a fresh 12-byte nonce followed by the
ciphertext and its tag. The credential's id is the associated data, so a sealed value
copied onto another credential does not open.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
from collections.abc import Mapping
from typing import Any

KEY_ENV = "WISP_SERVE_VAULT_KEY"
_VERSION = "v1:"
_NONCE = 12


class SealingError(Exception):
    """No usable key, or a sealed value that does not open under it."""


def key_of(environ: Mapping[str, str]) -> bytes:
    raw = environ.get(KEY_ENV, "").strip()
    if not raw:
        raise SealingError(f"{KEY_ENV} is not set: this server has no key to encrypt "
                           "vault credentials with, and never stores them in plain text")
    key = _decode(raw)
    if key is None or len(key) != 32:
        raise SealingError(f"{KEY_ENV} must be 32 bytes, as 64 hexadecimal characters or "
                           "in base64")
    return key


def _decode(raw: str) -> bytes | None:
    if len(raw) == 64:
        try:
            return bytes.fromhex(raw)
        except ValueError:
            pass
    try:
        return base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_"
                                if "-" in raw or "_" in raw else None, validate=True)
    except (binascii.Error, ValueError):
        return None


def seal(fields: Mapping[str, Any], bound_to: str,
         environ: Mapping[str, str] | None = None) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = key_of(os.environ if environ is None else environ)
    nonce = secrets.token_bytes(_NONCE)
    plain = json.dumps(dict(fields), separators=(",", ":")).encode()
    sealed = AESGCM(key).encrypt(nonce, plain, bound_to.encode())
    return _VERSION + base64.b64encode(nonce + sealed).decode()


def unseal(value: str, bound_to: str, environ: Mapping[str, str] | None = None
           ) -> dict[str, Any]:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = key_of(os.environ if environ is None else environ)
    if not value.startswith(_VERSION):
        raise SealingError("the stored secret is not in a known sealed form")
    try:
        blob = base64.b64decode(value[len(_VERSION):], validate=True)
        plain = AESGCM(key).decrypt(blob[:_NONCE], blob[_NONCE:], bound_to.encode())
    except (binascii.Error, ValueError, InvalidTag):
        raise SealingError(f"the stored secret does not open with this {KEY_ENV} (was the "
                           "key changed?)") from None
    fields = json.loads(plain)
    return fields if isinstance(fields, dict) else {}
