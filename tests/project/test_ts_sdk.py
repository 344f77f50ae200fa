"""The official TypeScript Agent SDK reloads skills and plugins at run time
(`reloadSkills`, `reloadPlugins({addPlugins})`), and the next turn uses them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import gone, needs_mcp, pids
from tests.project import tree
from tests.sdk.test_ts_sdk import drive, node  # noqa: F401  (fixtures)
from wisp.testing import ScriptedServer, reply


@needs_mcp
def test_reload_skills_and_plugins_change_the_next_turn(
        drive, server: ScriptedServer, work: Path, tmp_path: Path) -> None:  # noqa: F811
    pid_file = tmp_path / "calc.pids"
    plugin = tree.plugin(tmp_path / "deployer", pid_file)
    tool = tree.plugin_tool()
    server.script(reply.tool_use("Skill", {"skill": "late"}),
                  reply.tool_use(tool, {"a": 1, "b": 2}), reply.text("done"))
    run = drive("reload.mjs", timeout=120, WISP_PLUGIN=str(plugin))
    summary = run.summary
    assert "late" not in summary["before"] and "late" in summary["after"]
    [late] = summary["skills"]["skills"]
    assert late == {"name": "late", "description": "Written after start-up", "argumentHint": ""}
    reloaded = summary["plugins"]
    assert [p["name"] for p in reloaded["plugins"]] == ["deployer"]
    assert "deployer:ship" in [c["name"] for c in reloaded["commands"]]
    assert "deployer:checker" in [a["name"] for a in reloaded["agents"]]
    assert {"name": "plugin:deployer:calc", "status": "connected"}.items() <= next(
        s for s in reloaded["mcpServers"] if s["name"] == "plugin:deployer:calc").items()
    assert reloaded["error_count"] == 0
    # The next turn: the skill loads, and the plugin's tool and hook run.
    first = server.requests[0].body
    assert {"Skill", tool} <= {t["name"] for t in first["tools"]}
    assert "LATE-SKILL-BODY" in json.dumps(server.requests[1].body["messages"][-1])
    result = next(b for b in server.requests[2].body["messages"][-1]["content"]
                  if b["type"] == "tool_result")
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert (work / "hook.log").read_text() == f"{tree.HOOK_MARK} {tool}\n"
    [final] = run.of("result")
    assert final["result"] == "done"
    [pid] = pids(pid_file)
    assert gone(pid)
