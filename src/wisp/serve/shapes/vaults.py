"""Vaults and vault credentials (`client.beta.vaults.*`, `.credentials.*`): request bodies
and queries as the SDK documents them, and the documents, which never hold a secret.

A credential's create body is split in two: the document (what responses show: the
server URL, the expiry) and its secret fields (`token`, `access_token`), which the vault
module seals before they are stored. Credentials of type `environment_variable` (secrets
substituted into a sandbox's outbound requests) and OAuth `refresh` settings (token
refresh) are refused: this server would store them and never act on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Final
from urllib.parse import urlsplit

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    ShapeError,
    _at,
    _choice,
    _get,
    _metadata,
    _obj,
    _patch_metadata,
    _required,
    _str,
    instant,
    new_id,
    timestamp,
)
from wisp.serve.shapes.queries import _flag, _known, _limit, _one

AUTH_TYPES: Final = ("static_bearer", "mcp_oauth", "environment_variable")
_NOT_HERE: Final = "is not supported by this server"
Query = Mapping[str, Sequence[str]]


def server_url(value: object, path: str) -> str:
    """An http(s) URL, kept as given; `url_key` is what credentials are matched on."""
    text = _str(value, path, empty=False, limit=2048)
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ShapeError(path, "expected an http or https URL")
    return text


def url_key(url: str) -> str:
    """An MCP server URL as agents and credentials are matched: scheme and host in lower
    case, no trailing slash (`https://Mcp.example.com/mcp/` is `https://mcp.example.com/mcp`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.lower()
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{netloc}{path}{query}"


def _display_name(value: object, path: str) -> str:
    return _str(value, path, empty=False, limit=255)


def _expiry(value: object, path: str) -> str:
    stamp = instant(value, path)
    if stamp <= timestamp():
        raise ShapeError(path, "must be in the future")
    return stamp


# Vaults -------------------------------------------------------------------------------

def vault_create(body: object) -> JSON:
    obj = _obj(body, "")
    now = timestamp()
    return {"id": new_id("vlt"), "type": "vault",
            "display_name": _display_name(_required(obj, "display_name", ""), "display_name"),
            "metadata": _get(obj, "metadata", "", _metadata, {}),
            "created_at": now, "updated_at": now, "archived_at": None}


def vault_updated(doc: JSON, body: object) -> JSON:
    obj = _obj(body, "")
    new = dict(doc)
    if obj.get("display_name") is not None:
        new["display_name"] = _display_name(obj["display_name"], "display_name")
    if obj.get("metadata") is not None:
        new["metadata"] = _patch_metadata(doc.get("metadata") or {},
                                          _metadata(obj["metadata"], "metadata", patch=True))
    if new != doc:
        new["updated_at"] = timestamp()
    return new


# Credentials --------------------------------------------------------------------------

def credential_create(vault_id: str, body: object) -> tuple[JSON, JSON]:
    """(the credential document, its secret fields)."""
    obj = _obj(body, "")
    auth, secret = _auth_create(_required(obj, "auth", ""), "auth")
    now = timestamp()
    display = obj.get("display_name")
    doc: JSON = {"id": new_id("vcrd"), "type": "vault_credential", "vault_id": vault_id,
                 "display_name": None if display is None else _str(display, "display_name",
                                                                   limit=255),
                 "metadata": _get(obj, "metadata", "", _metadata, {}), "auth": auth,
                 "created_at": now, "updated_at": now, "archived_at": None}
    return doc, secret


def _auth_create(value: object, path: str) -> tuple[JSON, JSON]:
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), AUTH_TYPES)
    if kind == "environment_variable":
        raise ShapeError(_at(path, "type"), "environment_variable credentials "
                         f"{_NOT_HERE} (its secret would never be substituted)")
    url = server_url(_required(obj, "mcp_server_url", path), _at(path, "mcp_server_url"))
    if kind == "static_bearer":
        token = _str(_required(obj, "token", path), _at(path, "token"), empty=False)
        return {"type": kind, "mcp_server_url": url}, {"token": token}
    _no_refresh(obj, path)
    token = _str(_required(obj, "access_token", path), _at(path, "access_token"), empty=False)
    expires = _get(obj, "expires_at", path, _expiry)
    return ({"type": kind, "mcp_server_url": url, "expires_at": expires, "refresh": None},
            {"access_token": token})


def _no_refresh(obj: JSON, path: str) -> None:
    if obj.get("refresh") is not None:
        raise ShapeError(_at(path, "refresh"), f"token refresh {_NOT_HERE}: store a new "
                         "access_token with credentials.update when it expires")


def credential_updated(doc: JSON, secret: JSON, body: object) -> tuple[JSON, JSON]:
    """(the document, the secret fields) after `POST .../credentials/{id}`."""
    obj = _obj(body, "")
    new, new_secret = dict(doc), dict(secret)
    if obj.get("display_name") is not None:
        new["display_name"] = _display_name(obj["display_name"], "display_name")
    if obj.get("metadata") is not None:
        new["metadata"] = _patch_metadata(doc.get("metadata") or {},
                                          _metadata(obj["metadata"], "metadata", patch=True))
    if obj.get("auth") is not None:
        new["auth"], new_secret = _auth_update(doc["auth"], secret, obj["auth"], "auth")
    if new != doc or new_secret != secret:
        new["updated_at"] = timestamp()
    return new, new_secret


def _auth_update(auth: JSON, secret: JSON, value: object, path: str) -> tuple[JSON, JSON]:
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), AUTH_TYPES)
    if kind != auth["type"]:
        raise ShapeError(_at(path, "type"), f"a credential's type cannot change (it is "
                         f"{auth['type']})")
    if "mcp_server_url" in obj:
        raise ShapeError(_at(path, "mcp_server_url"), "immutable after create")
    field = "token" if kind == "static_bearer" else "access_token"
    new_secret = dict(secret)
    if obj.get(field) is not None:
        new_secret[field] = _str(obj[field], _at(path, field), empty=False)
    if kind == "static_bearer":
        return dict(auth), new_secret
    _no_refresh(obj, path)
    new = dict(auth)
    if obj.get("expires_at") is not None:
        new["expires_at"] = _expiry(obj["expires_at"], _at(path, "expires_at"))
    return new, new_secret


def bearer_token(auth: JSON, secret: JSON) -> str | None:
    """The token a credential sends as `Authorization: Bearer …` (None once expired)."""
    expires = auth.get("expires_at")
    if expires and expires <= timestamp():
        return None
    token = secret.get("token") or secret.get("access_token")
    return str(token) if token else None


def validation(doc: JSON, status: str, probe: JSON | None) -> JSON:
    """The `vault_credential_validation` of `mcp_oauth_validate`."""
    return {"type": "vault_credential_validation", "credential_id": doc["id"],
            "vault_id": doc["vault_id"], "status": status, "has_refresh_token": False,
            "mcp_probe": probe, "refresh": None,
            "validated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"}


# Queries ------------------------------------------------------------------------------

def list_query(query: Query) -> JSON:
    """Vaults and credentials lists: `limit` (≤ 100), `page`, `include_archived`."""
    _known(query, ("limit", "page", "include_archived"))
    return {"limit": _limit(query, 20, 100), "page": _one(query, "page"),
            "include_archived": _flag(query, "include_archived")}
