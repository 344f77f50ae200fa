"""What a foreground subagent's Task call returns, as an SDK program sees it, against the
reference's recorded run (tests/fixtures/reference/tasks/foreground_agent.json): the
tool_result is a list of text blocks framing the report the reference's way, and the
structured result's `content` names the tools used before the report."""

from __future__ import annotations

import asyncio
import json

from tests.subagents import reference as r


def _main_tool_result(frames: list[dict]) -> dict:
    return next(f for f in frames if f.get("type") == "user"
                and f.get("parent_tool_use_id") is None and "tool_use_result" in f)


def test_the_task_result_is_framed_as_the_reference_frames_it():
    fixture = json.loads(r.fixture_path("foreground_agent").read_text())
    recorded = _main_tool_result(fixture["frames"])
    found = asyncio.run(r.run(r.wisp_cli(), r.SCENARIOS["foreground_agent"]))
    try:
        ours = _main_tool_result(found.frames)
    finally:
        r.cleanup(found)
    [block] = ours["message"]["content"]
    [theirs] = recorded["message"]["content"]
    assert isinstance(block["content"], list) and len(block["content"]) == 1
    text = block["content"][0]["text"]
    # The fixture keeps 300 characters of it: ours must read the same that far.
    kept = theirs["content"][0]["text"].split("…[")[0]
    assert text.startswith(kept)
    assert "\n  sub done\nagentId: " in text and text.endswith("</usage>")
    assert ours["tool_use_result"]["content"] == recorded["tool_use_result"]["content"]
    assert json.dumps(ours["tool_use_result"]["toolsUsed"]) == '["Bash"]'
