"""Environments: the `POST /v1/environments` and `POST /v1/environments/{id}` bodies
and the environment documents."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    Parser,
    child_path,
    new_id,
    optional_field,
    patched_metadata,
    read_bool,
    read_choice,
    read_metadata,
    read_object,
    read_optional_str,
    read_str,
    read_strs,
    read_variant,
    required_field,
    timestamp,
)
from wisp.serve.shapes.documents import (
    EnvironmentDeleted,
    EnvironmentDocument,
    Metadata,
    as_environment,
    editable,
)


def _limited_network(obj: JSON, path: str) -> JSON:
    return {"type": "limited",
            "allow_mcp_servers": optional_field(obj, "allow_mcp_servers", path, read_bool, False),
            "allow_package_managers": optional_field(obj, "allow_package_managers", path,
                                                     read_bool, False),
            "allowed_hosts": optional_field(obj, "allowed_hosts", path, read_strs, [])}


_NETWORKS: Final[Mapping[str, Parser]] = {
    "unrestricted": lambda obj, path: {"type": "unrestricted"}, "limited": _limited_network}
_PACKAGE_MANAGERS: Final = ("apt", "cargo", "gem", "go", "npm", "pip")


def _packages(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    if obj.get("type") is not None:
        read_choice(obj["type"], child_path(path, "type"), ("packages",))
    return {"type": "packages",
            **{key: optional_field(obj, key, path, read_strs, []) for key in _PACKAGE_MANAGERS}}


def _cloud(obj: JSON, path: str) -> JSON:
    return {"type": "cloud",
            "networking": optional_field(obj, "networking", path,
                                         lambda v, p: read_variant(v, p, _NETWORKS),
                                         {"type": "unrestricted"}),
            "packages": optional_field(obj, "packages", path, _packages, None)
            or _packages({}, child_path(path, "packages"))}


_CONFIGS: Final[Mapping[str, Parser]] = {
    "cloud": _cloud, "self_hosted": lambda obj, path: {"type": "self_hosted"}}


def _config(value: object, path: str) -> JSON:
    return read_variant(value, path, _CONFIGS)


def _scope(value: object, path: str) -> str:
    return read_choice(value, path, ("organization", "account"))


class EnvironmentFields(TypedDict):
    """What `environment_create` returns: the environment document's own fields."""

    name: str
    config: JSON
    description: str | None
    metadata: Metadata
    scope: Literal["organization", "account"]


def environment_create(body: object) -> EnvironmentFields:
    """The body of `POST /v1/environments`, normalised (no config: a default cloud one)."""
    obj = read_object(body, "")
    return {
        "name": read_str(required_field(obj, "name", ""), "name", empty=False),
        "config": optional_field(obj, "config", "", _config) or _cloud({}, "config"),
        "description": optional_field(obj, "description", "", read_str),
        "metadata": optional_field(obj, "metadata", "", read_metadata, {}),
        "scope": optional_field(obj, "scope", "", _scope, "organization"),
    }


class EnvironmentPatch(TypedDict, total=False):
    """What `environment_update` returns: the fields the body sets, normalised."""

    name: str
    config: JSON
    description: str | None
    metadata: dict[str, str | None]  # a None or "" value deletes its key
    scope: Literal["organization", "account"]


def environment_update(body: object) -> EnvironmentPatch:
    """The body of `POST /v1/environments/{id}`: only the fields it sets. A null name,
    config or scope keeps the stored one; a null description clears it."""
    obj = read_object(body, "")
    patch: JSON = {}
    readers: dict[str, Callable[[Any, str], Any]] = {
        "name": lambda v, p: read_str(v, p, empty=False), "config": _config, "scope": _scope,
        "metadata": lambda v, p: read_metadata(v, p, patch=True)}
    for key, read in readers.items():
        if obj.get(key) is not None:
            patch[key] = read(obj[key], key)
    if "description" in obj:
        patch["description"] = read_optional_str(obj["description"], "description")
    return cast(EnvironmentPatch, patch)  # the readers': tests/serve/test_body_types.py


def environment_document(fields: EnvironmentFields, *, environment_id: str | None = None,
                         now: str | None = None) -> EnvironmentDocument:
    """A new environment (BetaEnvironment) from `environment_create`'s fields."""
    now = now or timestamp()
    return {"id": environment_id or new_id("env"), "type": "environment",
            **copy.deepcopy(fields), "created_at": now, "updated_at": now, "archived_at": None}


def environment_updated(doc: EnvironmentDocument, patch: EnvironmentPatch, *,
                        now: str | None = None) -> EnvironmentDocument:
    """`doc` with `environment_update`'s patch applied (a metadata value of null or ""
    deletes its key, as the API documents for environments)."""
    new = editable(doc)
    fields: Mapping[str, Any] = patch
    for key, value in fields.items():
        new[key] = (patched_metadata(doc.get("metadata") or {}, value, empty_deletes=True)
                    if key == "metadata" else copy.deepcopy(value))
    new["updated_at"] = now or timestamp()
    return as_environment(new)


def deleted_environment(environment_id: str) -> EnvironmentDeleted:
    """The body of `DELETE /v1/environments/{id}`."""
    return {"id": environment_id, "type": "environment_deleted"}
