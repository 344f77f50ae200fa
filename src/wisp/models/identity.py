"""The device id `metadata.user_id` names (wisp.models.shape.user_id): the user's
`userID` in the config file Claude Code and wisp share (`wisp.paths.config_file`),
so both name the same device; else one wisp keeps in its config folder, made once."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

ID_FILE = "wisp-device-id"


def device_id(env: Mapping[str, str]) -> str:
    from wisp.paths import config_dir, config_file

    shared = _user_id(config_file(env))
    if shared:
        return shared
    return _own_id(config_dir(env) / ID_FILE)


def _user_id(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = doc.get("userID") if isinstance(doc, dict) else None
    return found if isinstance(found, str) and found else None


def _own_id(path: Path) -> str:
    with contextlib.suppress(OSError):
        kept = path.read_text(encoding="ascii").strip()
        if kept:
            return kept
    import secrets  # here: only the first run makes one, and `secrets` costs ~3 ms to load

    made = secrets.token_hex(32)  # the reference's userID: 64 hex digits
    with contextlib.suppress(OSError):  # unwritable: a fresh id per session, no error
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(made + "\n")
    return made
