"""`get_context_usage`: where the context window goes, estimated locally.

Estimates use ~4 characters per token, the usual rule of thumb for English and code;
no network call is made (the reference fires ~30 count_tokens requests for this).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.models import catalog

if TYPE_CHECKING:
    from wisp.engine.context import RunContext
    from wisp.project.context import ProjectContext

CHARS_PER_TOKEN = 4


def _tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def context_usage(ctx: RunContext, project: ProjectContext | None = None) -> JSON:
    """For any front end: the duplex `get_context_usage` answer, the UI's /context."""
    config, session = ctx.config, ctx.session
    builtin = [t.api_definition() for n, t in config.tools.items() if not n.startswith("mcp__")]
    mcp = [t.api_definition() for n, t in config.tools.items() if n.startswith("mcp__")]
    categories = [
        (
            "system_prompt",
            "System prompt",
            _tokens(config.system_blocks) if config.system_blocks else 0,
            "promptBorder",
        ),
        ("system_tools", "System tools", _tokens(builtin) if builtin else 0, "inactive"),
        ("mcp_tools", "MCP tools", _tokens(mcp) if mcp else 0, "cyan_FOR_SUBAGENTS_ONLY"),
        ("memory_files", "Memory files",
         _tokens(config.context_blocks) if config.context_blocks else 0, "claude"),
        ("messages", "Messages", _tokens(session.history) if session.history else 0, "purple"),
    ]
    total = sum(c[2] for c in categories)
    window = catalog.context_window(session.model)
    free = max(0, window - total)
    rows = [
        {"id": cid, "name": name, "tokens": tokens, "color": color, "kind": "estimate"}
        for cid, name, tokens, color in categories
    ]
    rows.append(
        {
            "id": "free",
            "name": "Free space",
            "tokens": free,
            "color": "promptBorder",
            "kind": "free",
        }
    )
    return {
        "categories": rows,
        "totalTokens": total,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * total / window, 2),
        "model": session.model,
        "isAutoCompactEnabled": False,
        "autocompactSource": None,
        "memoryFiles": memory_files(project),
        "mcpTools": [{"name": t["name"], "tokens": _tokens(t)} for t in mcp],
        "agents": [],
        "gridRows": [],
        "estimated": True,
    }


def memory_files(project: ProjectContext | None) -> list[JSON]:
    """Each loaded memory file: its path, kind and estimated tokens."""
    if project is None:
        return []
    return [{"path": str(m.path), "type": m.kind, "tokens": _tokens(m.content)}
            for m in project.memory]
