"""`oa_wisp`: the real `wisp` pointed at the scripted server's OpenAI-compatible route
(`--model openai:<name>`, OPENAI_BASE_URL/OPENAI_API_KEY), with no Anthropic endpoint at
all: a request that went to the Messages API would fail loudly."""

from __future__ import annotations

import pytest

from tests.conftest import Runner
from wisp.testing import ScriptedServer

OA_KEY = "sk-oa-test-0123456789"


@pytest.fixture
def oa_wisp(wisp: Runner, server: ScriptedServer) -> Runner:
    wisp.env.update({"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": OA_KEY,
                     "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/unused",
                     "ANTHROPIC_MODEL": "openai:gpt-test"})
    return wisp
