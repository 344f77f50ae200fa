"""wisp against the reference CLI's recorded behaviour with subagents and background
tasks: the task frames (`task_started`, `task_progress`, `task_updated`,
`task_notification`, `background_tasks_changed`) with their keys and order, which
subagent frames are shown (with and without --forward-subagent-text), background
subagents and commands (the call returns at once, the process waits, the end wakes a turn
whose result carries `origin`), `stop_task`, hook inputs, the subagent transcript the SDKs'
helpers read, and a background command's output file.

Each scenario's fixture (tests/fixtures/reference/tasks/, recorded by
`python -m tests.subagents.reference`) holds the digest wisp's run must give, except where
`WISP_DIFFERS` says wisp differs on purpose. Where the reference is installed, it is run
again too, so a fixture that no longer says what the reference does is noticed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.frame_check import check_frame
from tests.subagents.reference import (
    REFERENCE,
    SCENARIOS,
    cleanup,
    digest,
    fixture_path,
    reference_cli,
    run,
    wisp_cli,
)

JSON = dict[str, Any]
NAMES = sorted(SCENARIOS)
# scenario → {digest key: wisp's value}, where wisp differs from the reference on purpose.
WISP_DIFFERS: dict[str, JSON] = {
    # A stopped subagent's transcript: wisp writes the interrupted call's result and the
    # interruption note as one user line (the reference, two); the messages are the same.
    "stop_foreground_agent": {"transcripts": {
        "listed": True, "messages": ["user", "assistant", "user"],
        "parent_tool_use_id": ["True"], "agent_output": "agent-<id>.jsonl"}},
}


def recorded(name: str) -> JSON:
    found: JSON = json.loads(fixture_path(name).read_text())["digest"]
    return found


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", NAMES)
def test_wisp_does_what_the_reference_was_recorded_doing(name: str) -> None:
    scenario = SCENARIOS[name]
    found = asyncio.run(run(wisp_cli(), scenario))
    for frame in found.frames:
        check_frame(frame)
    expected = {**recorded(name), **WISP_DIFFERS.get(name, {})}
    try:
        assert digest(found, scenario) == expected, found.stderr[-3000:]
    finally:
        cleanup(found)


@pytest.mark.timeout(180)
@pytest.mark.skipif(not REFERENCE.exists(), reason="the reference CLI is not installed "
                    "(python bench/run.py --install-reference, or WISP_REFERENCE_CLI)")
@pytest.mark.parametrize("name", NAMES)
def test_the_reference_still_does_what_was_recorded(name: str) -> None:
    scenario = SCENARIOS[name]
    found = asyncio.run(run(reference_cli(), scenario))
    try:
        assert digest(found, scenario) == recorded(name)
    finally:
        cleanup(found)


def test_every_scenario_has_its_fixture() -> None:
    missing = [name for name in SCENARIOS if not fixture_path(name).exists()]
    assert not missing, "record them: python -m tests.subagents.reference " + " ".join(missing)
