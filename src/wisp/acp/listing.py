"""`session/list`: the wisp sessions an editor can load, newest first, read from the same
transcripts the terminal UI's /resume and the SDKs' listings read.

Above: `wisp.acp.agent`. Below: the transcript folders (`wisp.paths`). Only the
top of each file is read: its working folder and first prompt are there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp import paths
from wisp.jsontypes import JSON

SCAN_LINES = 50


def list_sessions(env: Mapping[str, str], cwd: str | None) -> list[JSON]:
    if cwd:
        folders = [paths.project_dir(env, Path(cwd))]
    else:
        folders = sorted((paths.config_dir(env) / "projects").glob("*"))
    rows = [row for folder in folders for path in _transcripts(folder)
            if (row := _row(path)) is not None and (not cwd or row["cwd"] == cwd)]
    rows.sort(key=lambda r: r["updatedAt"], reverse=True)
    return rows


def _transcripts(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.glob("*.jsonl") if paths.is_uuid(p.stem)]
    except OSError:
        return []


def _row(path: Path) -> JSON | None:
    try:
        modified = path.stat().st_mtime
        with path.open(encoding="utf-8", errors="replace") as f:
            head = [line for _, line in zip(range(SCAN_LINES), f, strict=False)]
    except OSError:
        return None
    cwd, title = None, None
    for line in head:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        cwd = cwd or entry.get("cwd")
        if title is None and entry.get("type") == "user":
            title = _text(entry.get("message"))
    if not isinstance(cwd, str):
        return None
    row: JSON = {"sessionId": path.stem, "cwd": cwd, "updatedAt": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(modified))}
    if title:
        row["title"] = title[:80]
    return row


def _text(message: Any) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip() or None
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
            return str(block["text"]).strip()
    return None
