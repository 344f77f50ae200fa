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
    child_path,
    instant,
    new_id,
    optional_field,
    patched_metadata,
    read_choice,
    read_metadata,
    read_object,
    read_str,
    required_field,
    timestamp,
)
from wisp.serve.shapes.companions import (
    CredentialDocument,
    CredentialValidation,
    VaultDocument,
    as_credential,
    as_vault,
)
from wisp.serve.shapes.documents import editable
from wisp.serve.shapes.queries import check_known_params, query_flag, query_limit, query_value

AUTH_TYPES: Final = ("static_bearer", "mcp_oauth", "environment_variable")
_NOT_HERE: Final = "is not supported by this server"
Query = Mapping[str, Sequence[str]]


def server_url(value: object, path: str) -> str:
    """An http(s) URL, kept as given; `url_key` is what credentials are matched on."""
    text = read_str(value, path, empty=False, limit=2048)
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
    return read_str(value, path, empty=False, limit=255)


def _expiry(value: object, path: str) -> str:
    stamp = instant(value, path)
    if stamp <= timestamp():
        raise ShapeError(path, "must be in the future")
    return stamp


# Vaults -------------------------------------------------------------------------------

def vault_create(body: object) -> VaultDocument:
    obj = read_object(body, "")
    now = timestamp()
    return {"id": new_id("vlt"), "type": "vault",
            "display_name": _display_name(required_field(obj, "display_name", ""), "display_name"),
            "metadata": optional_field(obj, "metadata", "", read_metadata, {}),
            "created_at": now, "updated_at": now, "archived_at": None}


def vault_updated(doc: VaultDocument, body: object) -> VaultDocument:
    obj = read_object(body, "")
    new = editable(doc)
    if obj.get("display_name") is not None:
        new["display_name"] = _display_name(obj["display_name"], "display_name")
    if obj.get("metadata") is not None:
        new["metadata"] = patched_metadata(doc.get("metadata") or {},
                                           read_metadata(obj["metadata"], "metadata", patch=True))
    if new != doc:
        new["updated_at"] = timestamp()
    return as_vault(new)


# Credentials --------------------------------------------------------------------------

def credential_create(vault_id: str, body: object) -> tuple[CredentialDocument, JSON]:
    """(the credential document, its secret fields)."""
    obj = read_object(body, "")
    auth, secret = _auth_create(required_field(obj, "auth", ""), "auth")
    now = timestamp()
    display = obj.get("display_name")
    doc: CredentialDocument = {
        "id": new_id("vcrd"), "type": "vault_credential", "vault_id": vault_id,
        "display_name": (None if display is None
                         else read_str(display, "display_name", limit=255)),
        "metadata": optional_field(obj, "metadata", "", read_metadata, {}), "auth": auth,
        "created_at": now, "updated_at": now, "archived_at": None}
    return doc, secret


def _auth_create(value: object, path: str) -> tuple[JSON, JSON]:
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), AUTH_TYPES)
    if kind == "environment_variable":
        raise ShapeError(child_path(path, "type"), "environment_variable credentials "
                         f"{_NOT_HERE} (its secret would never be substituted)")
    url = server_url(required_field(obj, "mcp_server_url", path),
                     child_path(path, "mcp_server_url"))
    if kind == "static_bearer":
        token = read_str(required_field(obj, "token", path), child_path(path, "token"), empty=False)
        return {"type": kind, "mcp_server_url": url}, {"token": token}
    _no_refresh(obj, path)
    token = read_str(required_field(obj, "access_token", path), child_path(path, "access_token"),
                     empty=False)
    expires = optional_field(obj, "expires_at", path, _expiry)
    return ({"type": kind, "mcp_server_url": url, "expires_at": expires, "refresh": None},
            {"access_token": token})


def _no_refresh(obj: JSON, path: str) -> None:
    if obj.get("refresh") is not None:
        raise ShapeError(child_path(path, "refresh"), f"token refresh {_NOT_HERE}: store a new "
                         "access_token with credentials.update when it expires")


def credential_updated(doc: CredentialDocument, secret: JSON,
                       body: object) -> tuple[CredentialDocument, JSON]:
    """(the document, the secret fields) after `POST .../credentials/{id}`."""
    obj = read_object(body, "")
    new, new_secret = editable(doc), dict(secret)
    if obj.get("display_name") is not None:
        new["display_name"] = _display_name(obj["display_name"], "display_name")
    if obj.get("metadata") is not None:
        new["metadata"] = patched_metadata(doc.get("metadata") or {},
                                           read_metadata(obj["metadata"], "metadata", patch=True))
    if obj.get("auth") is not None:
        new["auth"], new_secret = _auth_update(doc["auth"], secret, obj["auth"], "auth")
    if new != doc or new_secret != secret:
        new["updated_at"] = timestamp()
    return as_credential(new), new_secret


def _auth_update(auth: JSON, secret: JSON, value: object, path: str) -> tuple[JSON, JSON]:
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), AUTH_TYPES)
    if kind != auth["type"]:
        raise ShapeError(child_path(path, "type"), f"a credential's type cannot change (it is "
                         f"{auth['type']})")
    if "mcp_server_url" in obj:
        raise ShapeError(child_path(path, "mcp_server_url"), "immutable after create")
    field = "token" if kind == "static_bearer" else "access_token"
    new_secret = dict(secret)
    if obj.get(field) is not None:
        new_secret[field] = read_str(obj[field], child_path(path, field), empty=False)
    if kind == "static_bearer":
        return dict(auth), new_secret
    _no_refresh(obj, path)
    new = dict(auth)
    if obj.get("expires_at") is not None:
        new["expires_at"] = _expiry(obj["expires_at"], child_path(path, "expires_at"))
    return new, new_secret


def bearer_token(auth: JSON, secret: JSON) -> str | None:
    """The token a credential sends as `Authorization: Bearer …` (None once expired)."""
    expires = auth.get("expires_at")
    if expires and expires <= timestamp():
        return None
    token = secret.get("token") or secret.get("access_token")
    return str(token) if token else None


def validation(doc: CredentialDocument, status: str,
               probe: JSON | None) -> CredentialValidation:
    """The `vault_credential_validation` of `mcp_oauth_validate`."""
    return {"type": "vault_credential_validation", "credential_id": doc["id"],
            "vault_id": doc["vault_id"], "status": status, "has_refresh_token": False,
            "mcp_probe": probe, "refresh": None,
            "validated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"}


# Queries ------------------------------------------------------------------------------

def list_query(query: Query) -> JSON:
    """Vaults and credentials lists: `limit` (≤ 100), `page`, `include_archived`."""
    check_known_params(query, ("limit", "page", "include_archived"))
    return {"limit": query_limit(query, 20, 100), "page": query_value(query, "page"),
            "include_archived": query_flag(query, "include_archived")}
