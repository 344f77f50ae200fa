"""What each model-facing option puts in the Messages API request, observed the same way
for wisp and the reference CLI: one `-p` run per case against the scripted server, and the
fields of its first request that the option drives (thinking, effort, context management,
max_tokens, metadata, betas). tests/record_reference.py records the reference's run as
tests/fixtures/reference/requests/options.json; test_parity.py checks wisp against it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tests.refrun import Place, print_run
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
OLD = "claude-sonnet-4-5-20250929"  # a model of the classic request shape
CASES: dict[str, tuple[str, ...]] = {
    "default": (),
    "effort_low": ("--effort", "low"),
    "effort_high": ("--effort", "high"),
    "effort_max": ("--effort", "max"),
    "thinking_adaptive": ("--thinking", "adaptive"),
    "thinking_disabled": ("--thinking", "disabled"),
    "max_thinking_tokens": ("--max-thinking-tokens", "4096"),
    "thinking_display": ("--thinking-display", "summarized"),
    "betas": ("--betas", "context-1m-2025-08-07"),
    "sonnet": ("--model", "sonnet"),
    "haiku": ("--model", "haiku"),
    "old_model": ("--model", OLD),
    "old_model_effort": ("--model", OLD, "--effort", "high"),
    "old_model_max_thinking_tokens": ("--model", OLD, "--max-thinking-tokens", "4096"),
    "old_model_thinking_disabled": ("--model", OLD, "--thinking", "disabled"),
    "old_model_thinking_display": ("--model", OLD, "--thinking-display", "summarized"),
}


def observe(body: JSON, headers: dict[str, str], path: str) -> JSON:
    metadata = body.get("metadata") or {}
    user = json.loads(metadata["user_id"]) if "user_id" in metadata else None
    return {
        "model": body.get("model"),
        "max_tokens": body.get("max_tokens"),
        "thinking": body.get("thinking"),
        "output_config": body.get("output_config"),
        "context_management": body.get("context_management"),
        "metadata_user_id": {k: ("<uuid>" if k == "session_id" else type(v).__name__)
                             for k, v in sorted(user.items())} if user else None,
        "betas": sorted(b for b in headers.get("anthropic-beta", "").split(",") if b),
        "query": path.partition("?")[2],
    }


def options_scenario(which: str, tmp: Path) -> JSON:
    observations: JSON = {}
    for name, args in CASES.items():
        with ScriptedServer() as server, tempfile.TemporaryDirectory(dir=tmp) as folder:
            server.script(reply.text("ok"))
            place = Place(Path(folder), server)
            code, _, _ = print_run(which, place, "-p", "hi", "--output-format", "json", *args)
            [request] = [r for r in server.requests
                         if r.path.partition("?")[0].endswith("/v1/messages")]
            assert request.body is not None
            observations[name] = {"exit": code,
                                  **observe(request.body, request.headers, request.path)}
    return observations
