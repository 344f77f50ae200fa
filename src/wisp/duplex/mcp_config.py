"""Reads `--mcp-config` values (JSON text or a file path) into server entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wisp.errors import UsageError

JSON = dict[str, Any]


def parse_mcp_configs(values: tuple[str, ...]) -> dict[str, JSON]:
    servers: dict[str, JSON] = {}
    for raw in values:
        text = raw if raw.lstrip().startswith("{") else _read(raw)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"Invalid --mcp-config: {exc.msg}") from None
        entries = data.get("mcpServers", data) if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise UsageError("Invalid --mcp-config: expected an object of servers")
        servers.update({str(k): v for k, v in entries.items() if isinstance(v, dict)})
    return servers


def _read(path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Could not read --mcp-config file {path}: {exc.strerror}") from None
