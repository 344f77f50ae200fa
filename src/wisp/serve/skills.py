"""Skills: what the skills routes, agents (which pin skill versions) and a session's
workspace (where an attached skill's files are mounted) all act through.

A skill is a document of kind `skill`; its versions are documents of kind
`skillver:<skill id>` and each version's files one document of kind
`skillfiles:<skill id>` (same id as the version), the bytes base64-encoded. Versions are
immutable, and their files live in the store rather than a data folder so that any
replica (PostgreSQL) can mount them. A new version's files are written before the
version, and the version before the skill points at it: a crash in between leaves an
unreferenced document, never a pointer to nothing.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.exclusive import exclusive
from wisp.serve.http import HttpError
from wisp.serve.shapes import skills as skill_shapes
from wisp.serve.store.base import Store, every

SKILL = "skill"
LATEST = "latest"
DELETE_LEASE = "skill_version_delete:"  # + skill id: the lease of its version deletions


def versions_kind(skill_id: str) -> str:
    return f"skillver:{skill_id}"


def files_kind(skill_id: str) -> str:
    return f"skillfiles:{skill_id}"


def runnable(data: bytes) -> bool:
    """A script (`#!` first): executable where it is unpacked. An upload carries no
    file modes, so this is the one sign of a file meant to be run."""
    return data.startswith(b"#!")


def _invalid(message: str) -> HttpError:
    return HttpError(400, "invalid_request_error", message)


class Skills:
    def __init__(self, store: Store, owner: str) -> None:
        self.store = store
        self.owner = owner

    def _all(self, kind: str) -> Iterator[JSON]:
        """Every document of a kind, newest first."""
        return every(self.store, kind, self.owner)

    # Skills ---------------------------------------------------------------------------

    def found(self, skill_id: str) -> shapes.SkillDocument:
        doc = self.store.get(SKILL, self.owner, skill_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"skill {skill_id} not found")
        return shapes.as_skill(doc)

    def create(self, display: str | None,
               upload: skill_shapes.Upload) -> shapes.SkillDocument:
        skill_id = shapes.new_id("skill")
        version = self._store_version(skill_id, upload)
        doc = skill_shapes.skill_document(skill_id, display or upload.name, version["id"])
        self.store.create(SKILL, self.owner, doc)
        return doc

    def delete(self, skill_id: str) -> None:
        """The skill and all its versions. Agents that pin it keep the reference: a
        session started from one is refused (400) until the agent is updated."""
        self.found(skill_id)
        for kind in (versions_kind(skill_id), files_kind(skill_id)):
            for doc in list(self._all(kind)):
                self.store.delete(kind, self.owner, doc["id"])
        self.store.delete(SKILL, self.owner, skill_id)

    # Versions -------------------------------------------------------------------------

    def add_version(self, skill_id: str,
                    upload: skill_shapes.Upload) -> shapes.SkillVersionDocument:
        skill = self.found(skill_id)
        first = self.version(skill_id, skill["latest_version_id"])
        if upload.name != first["name"]:
            raise _invalid(f"files: this version's SKILL.md names the skill "
                           f"{upload.name!r}, and the skill is {first['name']!r} (a "
                           "skill's name cannot change)")
        version = self._store_version(skill_id, upload)
        now = shapes.timestamp()
        # Merged into the skill as stored (one locked read-modify-write): a change made
        # since it was read is kept.
        self.store.modify(SKILL, self.owner, skill_id, lambda stored: {
            **stored, "latest_version_id": version["id"], "updated_at": now})
        return version

    def _store_version(self, skill_id: str,
                       upload: skill_shapes.Upload) -> shapes.SkillVersionDocument:
        version = skill_shapes.version_document(skill_id, upload)
        encoded = {path: base64.b64encode(data).decode("ascii")
                   for path, data in upload.files.items()}
        self.store.create(files_kind(skill_id), self.owner, {
            "id": version["id"], "files": encoded, "created_at": version["created_at"]})
        self.store.create(versions_kind(skill_id), self.owner, version)
        return version

    def version(self, skill_id: str, version_id: str) -> shapes.SkillVersionDocument:
        if version_id == LATEST:
            version_id = str(self.found(skill_id)["latest_version_id"])
        doc = self.store.get(versions_kind(skill_id), self.owner, version_id)
        if doc is None:
            raise HttpError(404, "not_found_error",
                            f"skill version {version_id} of skill {skill_id} not found")
        return shapes.as_skill_version(doc)

    def delete_version(self, skill_id: str, version_id: str) -> None:
        """A skill keeps at least one version (its `latest_version_id` is always set):
        its last one goes with the skill. Deleting the latest makes the one before it
        the latest."""
        self.found(skill_id)  # 404 for another key's skill
        # One deletion at a time per skill (`exclusive`): whether a version is the last
        # one, and which is the latest after it, are read from the other versions, which
        # a concurrent deletion would change between the check and the delete.
        with exclusive(self.store, f"{DELETE_LEASE}{skill_id}",
                       f"a version of skill {skill_id} is being deleted by another request"):
            self._delete_version(skill_id, version_id)

    def _delete_version(self, skill_id: str, version_id: str) -> None:
        doc = self.version(skill_id, version_id)
        rest = [v for v in self._all(versions_kind(skill_id)) if v["id"] != doc["id"]]
        if not rest:
            raise _invalid(f"skill version {doc['id']} is the only version of skill "
                           f"{skill_id}: delete the skill instead")
        self.store.delete(versions_kind(skill_id), self.owner, doc["id"])
        self.store.delete(files_kind(skill_id), self.owner, doc["id"])
        now = shapes.timestamp()

        def next_latest(stored: JSON) -> JSON | None:
            if stored["latest_version_id"] != doc["id"]:
                return None  # not the latest (any more): the skill stays as it is
            return {**stored, "latest_version_id": rest[0]["id"], "updated_at": now}

        self.store.modify(SKILL, self.owner, skill_id, next_latest)

    def files(self, skill_id: str, version_id: str) -> dict[str, bytes]:
        doc = self.store.get(files_kind(skill_id), self.owner, version_id)
        if doc is None:
            raise HttpError(404, "not_found_error",
                            f"skill version {version_id} of skill {skill_id} not found")
        return {path: base64.b64decode(data) for path, data in doc["files"].items()}

    # Agents ---------------------------------------------------------------------------

    def resolve_session(self, snapshot: Mapping[str, Any]) -> None:
        """A session's agent snapshot: its skills (overrides may name `latest`) and its
        roster agents' pinned skills, which must all still exist (400 otherwise)."""
        self.resolve(snapshot, "agent")
        roster = (snapshot.get("multiagent") or {}).get("agents") or []
        for i, member in enumerate(roster):
            self.resolve(member, f"agent.multiagent.agents[{i}]")

    def resolve(self, fields: Mapping[str, Any], path: str = "") -> None:
        """Pins each of `fields["skills"]` to a version of one of the owner's skills
        (`latest` resolves to the newest now, as the API's agents show it). An unknown
        skill or version, an Anthropic skill (none are installed here) or two skills of
        one name is a 400 naming the entry."""
        names: dict[str, str] = {}
        for i, entry in enumerate(fields.get("skills") or []):
            where = f"{path}{'.' if path else ''}skills[{i}]"
            if entry["type"] != "custom":
                raise _invalid(f"{where}: Anthropic skills are not available on this "
                               "server (upload the skill as a custom skill)")
            try:
                version = self.version(entry["skill_id"], entry.get("version") or LATEST)
            except HttpError:
                raise _invalid(f"{where}: skill {entry['skill_id']} (version "
                               f"{entry.get('version') or LATEST}) not found") from None
            if version["name"] in names:
                raise _invalid(f"{where}: skill {entry['skill_id']} is named "
                               f"{version['name']!r}, as {names[version['name']]} is")
            names[version["name"]] = entry["skill_id"]
            entry["version"] = version["id"]
