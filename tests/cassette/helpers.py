"""What the cassette tests share: an in-process `Runtime` run and small model drivers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wisp.engine.events import Event
from wisp.engine.outcome import Outcome
from wisp.models.base import Model, ModelRequest
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.runtime import Runtime

JSON = dict[str, Any]


class Sink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def run_env(home: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "WISP_CONFIG_DIR": str(home / ".wisp"), "CLAUDE_CODE_MAX_RETRIES": "3",
            "WISP_RETRY_BASE_DELAY_MS": "1", **extra}


async def run_prompt(root: Path, model: Model, prompt: str = "make the file",
                     **env: str) -> tuple[Outcome, Sink, Path]:
    """One prompt in a fresh project folder under `root`; Bash runs without asking."""
    cwd, home = root / "work", root / "home"
    cwd.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    config = RuntimeConfig(cwd=cwd, env=run_env(home, **env),
                           permission_mode="bypassPermissions", permission_mode_set=True,
                           bypass_allowed=True, setting_sources=())
    sink = Sink()
    runtime = Runtime.open(config, sink, model=model)
    try:
        outcome = await runtime.run_prompt(prompt)
    finally:
        await runtime.aclose()
    return outcome, sink, cwd


def request(text: str, *, model: str = "claude-test", **fields: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=[{"role": "user", "content": text}],
                        max_tokens=100, **fields)


async def drain(model: Model, req: ModelRequest) -> list[JSON]:
    async with model.stream(req) as stream:
        return [event async for event in stream]


def text_of(events: list[JSON]) -> str:
    return "".join(e["delta"].get("text", "") for e in events
                   if e.get("type") == "content_block_delta")
