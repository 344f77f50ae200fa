"""Skills and skill versions (`client.beta.skills.*`): an upload's files checked as the
SDK documents them, and the documents.

An upload is a set of files under one top-level folder (or none), with `SKILL.md` at the
folder's root. Its front matter names the skill (`name`, else the folder's name: a
kebab-case slug of at most 64 characters) and describes it (`description`, else the
body's first line). Every version of a skill has the name its first one had. An upload
holds at most `MAX_UPLOAD` bytes and `MAX_FILES` files: a skill is instructions and a few
scripts, kept whole in the store so every replica can mount it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Final

from wisp.jsontypes import JSON
from wisp.project.frontmatter import first_line, normalise_text, scalar, split_front_matter
from wisp.serve.shapes.common import ShapeError, new_id, read_str, timestamp
from wisp.serve.shapes.companions import SkillDocument, SkillVersionDocument
from wisp.serve.shapes.queries import check_known_params, query_limit, query_value

SKILL_FILE: Final = "SKILL.md"
MAX_UPLOAD: Final = 8 * 1024 * 1024
MAX_FILES: Final = 500
MAX_DISPLAY_NAME: Final = 255
_SLUG: Final = r"[a-z0-9]+(-[a-z0-9]+)*"
SOURCES: Final = ("custom", "anthropic", "anthropic_example", "plugin")


class Upload:
    """A checked upload: the skill's name and description, and its files by their path
    inside the skill's folder."""

    __slots__ = ("description", "files", "name")

    def __init__(self, name: str, description: str, files: dict[str, bytes]) -> None:
        self.name = name
        self.description = description
        self.files = files


def _relative(filename: str, index: int) -> tuple[str, ...]:
    where = f"files[{index}]"
    parts = tuple(p for p in filename.replace("\\", "/").split("/") if p not in ("", "."))
    if not parts or filename.startswith("/") or ".." in parts:
        raise ShapeError(where, f"{filename!r}: expected a relative path inside the "
                         "skill's folder")
    if any(ord(c) < 32 for c in filename):
        raise ShapeError(where, "control characters are not allowed in a file name")
    return parts


def _split_folder(paths: Sequence[tuple[str, ...]]) -> tuple[str | None, list[str]]:
    """(the common top-level folder or None, each file's path inside it)."""
    if all(len(p) == 1 for p in paths):
        return None, [p[0] for p in paths]
    tops = {p[0] for p in paths}
    if len(tops) != 1 or any(len(p) == 1 for p in paths):
        raise ShapeError("files", "all files must be in the same top-level folder")
    return paths[0][0], ["/".join(p[1:]) for p in paths]


def upload(files: Sequence[tuple[str, bytes]]) -> Upload:
    """The files of a `POST /v1/skills` or `/v1/skills/{id}/versions`, checked."""
    if not files:
        raise ShapeError("files", f"required: at least the skill's {SKILL_FILE}")
    if len(files) > MAX_FILES:
        raise ShapeError("files", f"at most {MAX_FILES} files")
    folder, paths = _split_folder([_relative(name, i) for i, (name, _) in enumerate(files)])
    if len(set(paths)) != len(paths):
        raise ShapeError("files", "two files have the same path")
    by_path = {path: data for path, (_, data) in zip(paths, files, strict=True)}
    if SKILL_FILE not in by_path:
        raise ShapeError("files", f"a {SKILL_FILE} is required at the root of the "
                         "skill's folder")
    try:
        text = normalise_text(by_path[SKILL_FILE].decode("utf-8"))
    except UnicodeDecodeError:
        raise ShapeError("files", f"{SKILL_FILE} is not UTF-8 text") from None
    fields, body = split_front_matter(text)
    name = scalar(fields.get("name")) or folder or ""
    if not re.fullmatch(_SLUG, name) or len(name) > 64:
        raise ShapeError("files", f"{SKILL_FILE}: the skill's name {name!r} must be a "
                         "kebab-case slug of at most 64 characters (front matter `name`, "
                         "or the folder's name)")
    description = scalar(fields.get("description")) or first_line(body)
    if not description:
        raise ShapeError("files", f"{SKILL_FILE}: a description is required (front "
                         "matter `description`)")
    return Upload(name, description, by_path)


def display_name(value: object) -> str | None:
    if value is None:
        return None
    text = read_str(value, "display_name", empty=False, limit=MAX_DISPLAY_NAME)
    if "\n" in text or "\r" in text:
        raise ShapeError("display_name", "expected a single line")
    return text


def skill_document(skill_id: str, display: str, version_id: str) -> SkillDocument:
    now = timestamp()
    return {"id": skill_id, "type": "skill", "display_name": display,
            "source": {"type": "custom"}, "latest_version_id": version_id,
            "created_at": now, "updated_at": now}


def version_document(skill_id: str, checked: Upload) -> SkillVersionDocument:
    return {"id": new_id("skillver"), "type": "skill_version", "skill_id": skill_id,
            "name": checked.name, "description": checked.description,
            "created_at": timestamp()}


def skills_query(query: Mapping[str, Sequence[str]]) -> JSON:
    """`limit` (default 20, at most 1000), `page` and `source`."""
    check_known_params(query, ("limit", "page", "source"))
    source = query_value(query, "source")
    if source is not None and source not in SOURCES:
        raise ShapeError("source", f"expected one of {', '.join(SOURCES)}")
    return {"limit": query_limit(query, 20, 1000), "page": query_value(query, "page"),
            "source": source}


def versions_query(query: Mapping[str, Sequence[str]]) -> JSON:
    check_known_params(query, ("limit", "page"))
    return {"limit": query_limit(query, 20, 1000), "page": query_value(query, "page")}


def skill_folder(name: str) -> PurePosixPath:
    """Where a session finds an attached skill, inside its workspace."""
    return PurePosixPath("skills") / name
