"""`python -m wisp.testing.server` and its script-file format."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wisp
from wisp.errors import RetryableAPIError
from wisp.models.accumulate import fold
from wisp.models.anthropic import AnthropicConfig, AnthropicModel
from wisp.models.base import ModelRequest
from wisp.testing._cli import from_json
from wisp.testing.reply import CutReply, DynamicReply, ErrorReply, MessageReply, RawReply


async def ask(url: str, prompt: str) -> dict[str, object]:
    model = AnthropicModel(AnthropicConfig(base_url=url))
    request = ModelRequest("m", [{"role": "user", "content": prompt}], 10)
    async with model.stream(request) as stream:
        return fold([event async for event in stream])


def test_the_cli_serves_a_script_then_echoes(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"text": "hi"},
                {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
                {"error": {"status": 529, "message": "overloaded"}},
            ]
        )
    )
    src = str(Path(wisp.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wisp.testing.server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first_line = proc.stdout.readline()
        url = first_line.split()[-1]
        assert url.startswith("http://127.0.0.1:")
        first = asyncio.run(ask(url, "x"))
        assert first["content"] == [{"type": "text", "text": "hi"}]
        second = asyncio.run(ask(url, "x"))
        assert second["stop_reason"] == "tool_use"
        with pytest.raises(RetryableAPIError, match="overloaded"):
            asyncio.run(ask(url, "x"))
        fourth = asyncio.run(ask(url, "are you there"))
        assert fourth["content"] == [{"type": "text", "text": "echo: are you there"}]
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert "RuntimeWarning" not in stderr
    assert "POST /v1/messages" in stderr  # requests are logged unless --quiet


def test_a_bad_script_file_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('[{"nonsense": 1}]')
    src = str(Path(wisp.__file__).parents[1])
    proc = subprocess.run(
        [sys.executable, "-m", "wisp.testing.server", "--script", str(script)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=30,
    )
    assert proc.returncode == 1  # as every usage error of wisp's (argparse alone exits 2)
    assert "unknown reply kind 'nonsense'" in proc.stderr


def test_script_entries() -> None:
    assert isinstance(from_json({"text": "hi"}), MessageReply)
    assert isinstance(from_json({"echo": True}), DynamicReply)
    assert isinstance(from_json({"malformed": None}), RawReply)
    assert from_json({"error": {"status": 529, "message": "m"}}) == ErrorReply(529, "m")
    cut = from_json({"cut": {"after_events": 3, "base": {"text": "abc"}}})
    assert isinstance(cut, CutReply) and isinstance(cut.base, MessageReply)
    assert isinstance(from_json({"tool_uses": [["A", {}], ["B", {"x": 1}]]}), MessageReply)
    assert isinstance(
        from_json({"message": {"blocks": [{"type": "text", "text": "t"}]}}), MessageReply
    )
    for bad in ({}, {"text": "a", "error": {}}, ["text"]):
        with pytest.raises(ValueError):
            from_json(bad)
