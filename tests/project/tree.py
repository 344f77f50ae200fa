"""Project trees for the end-to-end tests: memory files, an agent, a skill, an output
style, and a plugin bundling a command, an agent, a hook and a stdio MCP server. Each
file carries a marker word the tests look for in what the model received."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.mcp.conftest import CALC

JSON = dict[str, Any]
PROJECT_RULE = "PROJECT-RULE-7f3a"
IMPORTED_RULE = "IMPORTED-RULE-21bc"
LOCAL_RULE = "LOCAL-RULE-9d0e"
USER_RULE = "USER-RULE-44c1"
AGENT_PROMPT = "AGENT-PROMPT-5be2: you review diffs line by line."
SKILL_BODY = "SKILL-BODY-0c9f: convert with pdftotext, then summarise."
STYLE_BODY = "STYLE-BODY-e81d: answer in exactly three short sentences."
PLUGIN_COMMAND_BODY = "PLUGIN-COMMAND-6a7b: deploy $ARGUMENTS now."
PLUGIN_AGENT_PROMPT = "PLUGIN-AGENT-3e1f: you check the deploy."
HOOK_MARK = "PLUGIN-HOOK-RAN"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def memory_files(work: Path, config_dir: Path) -> None:
    (work / ".git").mkdir(exist_ok=True)
    write(work / "CLAUDE.md", f"# Project\n{PROJECT_RULE}\nSee @docs/style.md for style.\n")
    write(work / "docs" / "style.md", f"{IMPORTED_RULE}\n")
    write(work / "CLAUDE.local.md", f"{LOCAL_RULE}\n")
    write(config_dir / "CLAUDE.md", f"{USER_RULE}\n")


def agent_file(work: Path, name: str = "reviewer") -> None:
    write(work / ".claude" / "agents" / f"{name}.md",
          f"---\nname: {name}\ndescription: Reviews diffs\ntools: Read, Grep\n---\n"
          f"{AGENT_PROMPT}\n")


def skill(work: Path, name: str = "pdf", *, user: bool = False) -> Path:
    """A project skill (`work` is the project), or a user one (`work` is the config dir)."""
    folder = (work if user else work / ".claude") / "skills" / name
    write(folder / "SKILL.md", f"---\nname: {name}\ndescription: Work with PDF files\n---\n"
          f"{SKILL_BODY}\n")
    write(folder / "reference.md", "extra notes\n")
    return folder


def output_style(work: Path, *, local: bool = True) -> None:
    write(work / ".claude" / "output-styles" / "terse.md",
          f"---\nname: Terse\ndescription: Very short answers\n---\n{STYLE_BODY}\n")
    settings = work / ".claude" / ("settings.local.json" if local else "settings.json")
    write(settings, json.dumps({"outputStyle": "Terse"}))


def plugin(root: Path, pid_file: Path, name: str = "deployer") -> Path:
    """A plugin with one command, one agent, one hook (PreToolUse on its MCP tool, which
    writes a file) and one stdio MCP server (the calc fixture)."""
    write(root / ".claude-plugin" / "plugin.json",
          json.dumps({"name": name, "version": "1.2.0", "description": "Deploys things"}))
    write(root / "commands" / "ship.md",
          f"---\ndescription: Ship it\n---\n{PLUGIN_COMMAND_BODY}\n")
    write(root / "agents" / "checker.md",
          f"---\nname: checker\ndescription: Checks deploys\n---\n{PLUGIN_AGENT_PROMPT}\n")
    hook = write(root / "hooks" / "mark.py",
                 "import json, os, sys\n"
                 "data = json.load(sys.stdin)\n"
                 "with open(os.path.join(os.environ['CLAUDE_PROJECT_DIR'], 'hook.log'), 'a') "
                 "as f:\n"
                 f"    f.write('{HOOK_MARK} ' + data['tool_name'] + '\\n')\n")
    write(root / "hooks" / "hooks.json", json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "mcp__.*", "hooks": [{
            "type": "command",
            "command": f"{sys.executable} ${{CLAUDE_PLUGIN_ROOT}}/hooks/{hook.name}"}]}]}}))
    write(root / ".mcp.json", json.dumps({"mcpServers": {"calc": {
        "command": sys.executable, "args": [str(CALC)],
        "env": {"CALC_PID_FILE": str(pid_file)}}}}))
    return root


def plugin_tool(name: str = "deployer", server: str = "calc", tool: str = "add") -> str:
    """The model-facing name of a plugin server's tool."""
    return f"mcp__plugin_{name}_{server}__{tool}"


def user_text(body: JSON) -> str:
    """All text of the request's first user message."""
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def system_text(body: JSON) -> str:
    return "\n".join(b.get("text", "") for b in body.get("system") or [])


def all_text(body: JSON) -> str:
    return json.dumps(body)
