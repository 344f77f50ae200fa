"""A served session takes the operator's permission rules from the service's
configuration folder and nothing else: not its CLAUDE.md, skills, agents, hooks or MCP
servers (they are the operator's, often personal; a session's come from its agent)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.serve.harness import cloud_setup, serving, user_message, wait_for
from wisp.testing import ScriptedServer, reply

MARK = "operator-private-7f3a"


def operators_folder(config: Path, witness: Path) -> None:
    """A configuration folder with one of everything a session could take from it."""
    (config / "skills" / "deploy").mkdir(parents=True)
    (config / "skills" / "deploy" / "SKILL.md").write_text(
        f"---\nname: deploy\ndescription: {MARK} skill\n---\nDeploy.\n")
    (config / "agents").mkdir()
    (config / "agents" / "helper.md").write_text(
        f"---\nname: helper\ndescription: {MARK} agent\n---\nHelp.\n")
    (config / "CLAUDE.md").write_text(f"{MARK} memory\n")
    touch = f"{sys.executable} -c \"open('{witness}', 'a').write('ran\\\\n')\""
    hook = [{"hooks": [{"type": "command", "command": touch}]}]
    (config / "settings.json").write_text(json.dumps({
        "permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {"UserPromptSubmit": hook, "PreToolUse": hook},
        "mcpServers": {"ops": {"command": sys.executable, "args": ["-c", touch]}},
    }))


def test_only_the_operators_permission_rules_reach_a_session(
        tmp_path: Path, server: ScriptedServer) -> None:
    witness = tmp_path / "witness"
    operators_folder(tmp_path / "config", witness)
    server.script(reply.tool_use("bash", {"command": "echo kept > f; rm f"}),
                  reply.text("done"))
    with serving(tmp_path, server) as served:
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
        client.beta.sessions.events.send(session.id, events=[user_message("go")])
        events = wait_for(client, session.id, lambda es: any(
            e["type"] == "session.status_idle" for e in es), timeout=60)
    [result] = [e for e in events if e["type"] == "agent.tool_result"]
    assert result["is_error"] is True  # the operator's deny rule holds
    sent = json.dumps([r.body for r in server.requests])
    assert MARK not in sent  # no memory, skill or agent of the operator's
    assert not any(t["name"].startswith("mcp__") for t in server.requests[0].body["tools"])
    assert not witness.exists()  # no hook ran, no MCP server started
