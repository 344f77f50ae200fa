"""Shared by the robustness tests: requests the model got, transcripts, hook settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Runner
from wisp.paths import project_key
from wisp.testing import ScriptedServer

JSON = dict[str, Any]
STREAM = ("--output-format", "stream-json", "--verbose")


def model_requests(server: ScriptedServer) -> list[JSON]:
    """The bodies of every Messages API call, in order."""
    return [
        r.body
        for r in server.requests
        if r.path.startswith("/v1/messages") and "count_tokens" not in r.path and r.body
    ]


def history_text(body: JSON) -> str:
    """A request's messages as text, non-ASCII kept (so U+FFFD reads as itself)."""
    return json.dumps(body["messages"], ensure_ascii=False)


def transcript_path(wisp: Runner, session_id: str) -> Path:
    return wisp.home / ".wisp" / "projects" / project_key(wisp.cwd) / f"{session_id}.jsonl"


def python_hook(wisp: Runner, event: str, code: str, matcher: str | None = None) -> None:
    """Registers, in the project settings, a hook that runs `code` with this Python."""
    script = wisp.cwd.parent / f"hook_{event}.py"
    script.write_text(code)
    entry: JSON = {"hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}
    if matcher:
        entry["matcher"] = matcher
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"hooks": {event: [entry]}}))
    wisp.trust()  # a project's hooks run only in a trusted folder
