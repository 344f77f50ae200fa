"""Helpers for session tests: where the `wisp` runner's transcripts land, and reading them."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Runner
from tests.shared_fixtures import shared_path
from wisp.paths import project_key

JSON = dict[str, Any]
# Claude Code's own transcripts, read from the shared reference beside the repository (not
# copied in: they hold fragments of the reference's prompts).
EXAMPLES = "reference/captures/cli/transcript_example"
SID = "11111111-2222-4333-8444-555555555555"
OTHER = "22222222-2222-4333-8444-555555555555"


def project_dir(wisp: Runner) -> Path:
    """The runner sets WISP_CONFIG_DIR to `<home>/.wisp` (tests/conftest.py::base_env)."""
    return wisp.home / ".wisp" / "projects" / project_key(wisp.cwd)


def transcript(wisp: Runner, session_id: str) -> Path:
    return project_dir(wisp) / f"{session_id}.jsonl"


def lines(path: Path) -> list[JSON]:
    """The message lines (those with a uuid): not the metadata beside them (`last-prompt`,
    `custom-title`, ...)."""
    return [e for e in raw_lines(path) if "uuid" in e]


def raw_lines(path: Path) -> list[JSON]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def messages(request: Any) -> list[JSON]:
    return list(request.body["messages"])


def texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met before the deadline")


def spawn(wisp: Runner, *args: str) -> subprocess.Popen[str]:
    return wisp.spawn(*args)


def kill9(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=15)


@pytest.fixture
def examples() -> Path:
    return shared_path(EXAMPLES)
