"""The official TypeScript Agent SDK drives slash commands in prompts and file
checkpoints (`rewindFiles`, with and without `dryRun`) through the real `wisp` process."""

from __future__ import annotations

from pathlib import Path

from tests.sdk.test_ts_sdk import drive, node  # noqa: F401  (fixtures)
from wisp.testing import ScriptedServer, reply


def test_rewind_files_supported_commands_compact_and_clear(
        drive, server: ScriptedServer, work: Path) -> None:  # noqa: F811
    a, b = work / "a.txt", work / "b.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(a), "content": "one\n"}),
        reply.text("wrote a"),
        reply.tool_use("Write", {"file_path": str(a), "content": "two\n"}),
        reply.tool_use("Write", {"file_path": str(b), "content": "new\n"}),
        reply.text("changed a, made b"),
        reply.text("THE SUMMARY"))
    run = drive("commands_rewind.mjs", timeout=120)
    summary = run.summary
    assert summary["before"] == {"a.txt": "two\n", "b.txt": "new\n"}
    assert summary["dryRun"] == {"canRewind": True, "filesChanged": [str(a), str(b)],
                                 "insertions": 1, "deletions": 2}
    assert summary["afterDryRun"] == summary["before"]
    assert summary["rewound"] == {"canRewind": True, "skippedLinks": 0}
    assert summary["atSecond"] == {"a.txt": "one\n", "b.txt": None}
    assert summary["unknown"] == {"canRewind": False,
                                  "error": "No file checkpoint found for this message."}
    assert {"compact", "clear"} <= set(summary["commands"])

    [boundary] = run.of("system", "compact_boundary")
    assert boundary["compact_metadata"]["trigger"] == "manual"
    results = run.of("result")
    assert [r.get("local_command") for r in results] == [None, None, "compact", "clear"]
    assert all(r["subtype"] == "success" and not r["is_error"] for r in results)
    [reset] = run.of("conversation_reset")
    assert reset["session_id"] == results[2]["session_id"] != results[3]["session_id"]
