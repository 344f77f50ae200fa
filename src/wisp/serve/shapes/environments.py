"""Environments: the `POST /v1/environments` and `POST /v1/environments/{id}` bodies
and the environment documents."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    Parser,
    _at,
    _bool,
    _choice,
    _get,
    _metadata,
    _obj,
    _opt_str,
    _patch_metadata,
    _required,
    _str,
    _strs,
    _variant,
    new_id,
    timestamp,
)


def _limited_network(obj: JSON, path: str) -> JSON:
    return {"type": "limited",
            "allow_mcp_servers": _get(obj, "allow_mcp_servers", path, _bool, False),
            "allow_package_managers": _get(obj, "allow_package_managers", path, _bool, False),
            "allowed_hosts": _get(obj, "allowed_hosts", path, _strs, [])}


_NETWORKS: Final[Mapping[str, Parser]] = {
    "unrestricted": lambda obj, path: {"type": "unrestricted"}, "limited": _limited_network}
_PACKAGE_MANAGERS: Final = ("apt", "cargo", "gem", "go", "npm", "pip")


def _packages(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    if obj.get("type") is not None:
        _choice(obj["type"], _at(path, "type"), ("packages",))
    return {"type": "packages",
            **{key: _get(obj, key, path, _strs, []) for key in _PACKAGE_MANAGERS}}


def _cloud(obj: JSON, path: str) -> JSON:
    return {"type": "cloud",
            "networking": _get(obj, "networking", path, lambda v, p: _variant(v, p, _NETWORKS),
                               {"type": "unrestricted"}),
            "packages": _get(obj, "packages", path, _packages, None)
            or _packages({}, _at(path, "packages"))}


_CONFIGS: Final[Mapping[str, Parser]] = {
    "cloud": _cloud, "self_hosted": lambda obj, path: {"type": "self_hosted"}}


def _config(value: object, path: str) -> JSON:
    return _variant(value, path, _CONFIGS)


def _scope(value: object, path: str) -> str:
    return _choice(value, path, ("organization", "account"))


def environment_create(body: object) -> JSON:
    """The body of `POST /v1/environments`, normalised (no config: a default cloud one)."""
    obj = _obj(body, "")
    return {
        "name": _str(_required(obj, "name", ""), "name", empty=False),
        "config": _get(obj, "config", "", _config) or _cloud({}, "config"),
        "description": _get(obj, "description", "", _str),
        "metadata": _get(obj, "metadata", "", _metadata, {}),
        "scope": _get(obj, "scope", "", _scope, "organization"),
    }


def environment_update(body: object) -> JSON:
    """The body of `POST /v1/environments/{id}`: only the fields it sets. A null name,
    config or scope keeps the stored one; a null description clears it."""
    obj = _obj(body, "")
    patch: JSON = {}
    readers: dict[str, Callable[[Any, str], Any]] = {
        "name": lambda v, p: _str(v, p, empty=False), "config": _config, "scope": _scope,
        "metadata": lambda v, p: _metadata(v, p, patch=True)}
    for key, read in readers.items():
        if obj.get(key) is not None:
            patch[key] = read(obj[key], key)
    if "description" in obj:
        patch["description"] = _opt_str(obj["description"], "description")
    return patch


def environment_document(fields: JSON, *, environment_id: str | None = None,
                         now: str | None = None) -> JSON:
    """A new environment (BetaEnvironment) from `environment_create`'s fields."""
    now = now or timestamp()
    return {"id": environment_id or new_id("env"), "type": "environment",
            **copy.deepcopy(fields), "created_at": now, "updated_at": now, "archived_at": None}


def environment_updated(doc: JSON, patch: JSON, *, now: str | None = None) -> JSON:
    """`doc` with `environment_update`'s patch applied (a metadata value of null or ""
    deletes its key, as the API documents for environments)."""
    new = copy.deepcopy(doc)
    for key, value in patch.items():
        new[key] = (_patch_metadata(doc.get("metadata") or {}, value, empty_deletes=True)
                    if key == "metadata" else copy.deepcopy(value))
    new["updated_at"] = now or timestamp()
    return new


def deleted_environment(environment_id: str) -> JSON:
    """The body of `DELETE /v1/environments/{id}`."""
    return {"id": environment_id, "type": "environment_deleted"}
