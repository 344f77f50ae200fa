"""Session: the run state of one conversation. Options stay immutable; this changes."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wisp.engine.usage import UsageLedger
from wisp.tools.processes import GLOBAL_PROCESSES, ProcessRegistry

JSON = dict[str, Any]


@dataclass
class Session:
    cwd: Path
    model: str
    permission_mode: str = "default"
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    history: list[JSON] = field(default_factory=list)
    usage: UsageLedger = field(default_factory=UsageLedger)
    tool_state: dict[str, Any] = field(default_factory=dict)
    processes: ProcessRegistry = field(default_factory=lambda: GLOBAL_PROCESSES)
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    result_count: int = 0
    # Tool names the host allowed for the rest of the session (from `--allowedTools`,
    # permission updates, ...). Rules proper live in the permission engine.
    session_allow: set[str] = field(default_factory=set)
    last_message_uuid: str | None = None
    transcript_path: str | None = None
