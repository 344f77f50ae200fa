"""The host's questions about the session and its MCP servers: usage and cost
(`get_usage`, `get_session_cost`), the model list, skills and plugins (reloaded from
disk), the plan, one of its files
(`read_file`), and `mcp_set_servers`, answered in the reference's shapes (recorded in
tests/fixtures/reference/control/).

`QueryHandlers` is registered beside `wisp.duplex.handlers`; the functions below it are
pure functions of what it passes in.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.duplex.init_answer import models
from wisp.engine.usage import UsageLedger
from wisp.errors import ControlError
from wisp.jsontypes import JSON
from wisp.permissions.engine import PermissionPolicy, evaluate
from wisp.wire import protocol as p

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

# A `read_file` without `max_bytes` reads at most this much (the host shows it in a viewer).
READ_LIMIT = 10 * 1024 * 1024


def register_queries(server: DuplexServer) -> None:
    h = QueryHandlers(server)
    on = server.dispatcher.on
    on(p.MCP_SET_SERVERS, h.mcp_set_servers)
    on(p.GET_USAGE, h.get_usage)
    on(p.LIST_MODELS, h.list_models)
    on(p.GET_SESSION_COST, h.get_session_cost)
    on(p.RELOAD_SKILLS, h.reload_skills)
    on(p.RELOAD_PLUGINS, h.reload_plugins)
    on(p.READ_FILE, h.read_file)
    on(p.GET_PLAN, h.get_plan)


class QueryHandlers:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server
        self.started = time.monotonic()

    async def mcp_set_servers(self, request: p.McpSetServers) -> JSON:
        answer = await self.server.mcp.set_servers(request["servers"])
        self.server.refresh_tools()
        return answer

    def _spans(self) -> tuple[UsageLedger, int, int]:
        wall_ms = round((time.monotonic() - self.started) * 1000)
        return self.server.session.usage, self.server.frames.api_ms, wall_ms

    async def get_usage(self, request: p.GetUsage) -> JSON:
        return usage(*self._spans())

    async def get_session_cost(self, request: p.GetSessionCost) -> JSON:
        return {"text": cost_text(*self._spans())}

    async def list_models(self, request: p.ListModels) -> JSON:
        return {"models": models(self.server.env)}

    async def reload_skills(self, request: p.ReloadSkills) -> JSON:
        from wisp.runtime.project import reload_skills

        before = self.server.commands()
        answer = {"skills": reload_skills(self.server.runtime)}
        self.server.commands_changed(before)
        return answer

    async def reload_plugins(self, request: p.ReloadPlugins) -> JSON:
        """Re-reads plugins (and loads `add_plugins`). `refuse_if_busy` is honoured;
        `hold_on_cache_impact` is not checked, so the answer never says `held`."""
        from wisp.runtime.project import reload_plugins

        server = self.server
        if request.get("refuse_if_busy") and server.turns.busy:
            raise ControlError("a turn is running; ask again once the session is idle",
                               code="reload_plugins_busy")
        added = [str(e["path"]) for e in request.get("add_plugins") or []]
        before = server.commands()
        answer = await reload_plugins(server.runtime, added)
        server.refresh_tools()
        server.commands_changed(before)
        return answer

    async def get_plan(self, request: p.GetPlan) -> JSON:
        """The session's plan file (written by an approved ExitPlanMode, or drafted there
        in plan mode), as the reference answers: exists, content, path."""
        from wisp.tools.exit_plan_mode import plan_file, read_plan

        session = self.server.session
        path = plan_file(self.server.runtime.env, session.session_id)
        content = read_plan(path)
        if content is None:
            return {"exists": False}
        return {"exists": True, "content": content, "path": str(path)}

    async def read_file(self, request: p.ReadFile) -> JSON:
        session = self.server.session
        return read_file(session.cwd, session.policy, request.get("path", ""),
                         request.get("max_bytes"), request.get("encoding"))


def usage(ledger: UsageLedger, api_ms: int, wall_ms: int) -> JSON:
    """`get_usage`: the session's totals. wisp counts no changed lines and knows no plan
    rate limits, so those are zero and null, as for an API-key session of the reference."""
    return {
        "session": {
            "total_cost_usd": ledger.cost_usd,
            "total_api_duration_ms": api_ms,
            "total_duration_ms": wall_ms,
            "total_lines_added": 0,
            "total_lines_removed": 0,
            "model_usage": ledger.model_usage(),
        },
        "subscription_type": None,
        "rate_limits_available": False,
        "rate_limits": None,
        "behaviors": None,
    }


def cost_text(ledger: UsageLedger, api_ms: int, wall_ms: int) -> str:
    """`get_session_cost`: the session's cost as a few aligned lines of text."""
    lines = [
        f"{'Estimated cost:':<23}${ledger.cost_usd:.4f}",
        f"{'Total duration (API):':<23}{_duration(api_ms)}",
        f"{'Total duration (wall):':<23}{_duration(wall_ms)}",
        f"{'Total code changes:':<23}0 lines added, 0 lines removed",
    ]
    if not ledger.by_model:
        lines.append(f"{'Usage:':<23}0 input, 0 output, 0 cache read, 0 cache write")
        return "\n".join(lines)
    lines.append("Usage by model:")
    for model, tally in ledger.by_model.items():
        tokens = tally.tokens
        lines.append(
            f"{model + ':':>21}  {_count(tokens['input_tokens'])} input, "
            f"{_count(tokens['output_tokens'])} output, "
            f"{_count(tokens['cache_read_input_tokens'])} cache read, "
            f"{_count(tokens['cache_creation_input_tokens'])} cache write "
            f"(${tally.cost_usd:.4f})")
    return "\n".join(lines)


def _duration(ms: int) -> str:
    seconds = int(ms // 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m {seconds}s"
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"


def _count(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    return f"{n / 1_000_000:.1f}".removesuffix(".0") + "m"


def read_file(cwd: Path, policy: PermissionPolicy, path: str, max_bytes: int | None,
              encoding: str | None) -> JSON:
    """`read_file`: a file for the host's viewer. The path is taken relative to the cwd and
    read only where the Read tool could read it without asking; anything else (outside
    the working folders, a deny rule, no such file, a folder) is refused with the
    reference's phrase. `max_bytes` of 0 or less means no limit of the host's."""
    from wisp.tools.read import Read

    target = (cwd / path).resolve() if path else None
    if target is None or evaluate(Read(), {"file_path": str(target)}, policy).behavior != "allow":
        raise ControlError(f"read denied: {path}")
    limit = max_bytes if max_bytes is not None and max_bytes > 0 else READ_LIMIT
    try:
        with target.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        raise ControlError(f"read denied: {path}") from None
    answer: JSON = {"absPath": str(target), "requested_path": path}
    if len(data) > limit:
        data = data[:limit]
        answer["truncated"] = True
    if encoding == "base64":
        return {"contents": base64.b64encode(data).decode("ascii"), **answer,
                "encoding": "base64"}
    text = data.decode("utf-8", errors="replace")
    lossy = "\ufffd" in text and "\ufffd".encode() not in data
    return {"contents": text, **answer, "lossy": lossy}
