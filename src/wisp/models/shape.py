"""What the model-facing options put in a Messages API request, as the reference CLI
(Claude Code 2.1.332) sends them: thinking, effort, context management, betas and the
metadata's user id. Measured offline against the scripted server for each option
(tests/fixtures/reference/requests/options.json; tests/request_parity checks wisp).

Two shapes, by model generation:

- current models (Claude 5 and later: `claude-opus-5-5`, ...): adaptive thinking with
  `display` (`omitted` unless `--thinking-display`), `output_config.effort` (`medium`
  unless `--effort`), and `context_management` clearing old thinking. `--thinking` and
  `--max-thinking-tokens` change nothing for them (the reference ignores both).
- classic models (Claude 3 and 4): `thinking: enabled` with a budget
  (`--max-thinking-tokens`, else max_tokens - 1) and no `output_config`; `--thinking
  disabled` sends `thinking: disabled` and no `context_management`.

Models of other providers (and ids that are not Claude's) get none of this.
"""

from __future__ import annotations

import json
import re

from wisp.jsontypes import JSON
from wisp.models import catalog

CONTEXT_MANAGEMENT: JSON = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
DEFAULT_EFFORT = "medium"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
# The reference's betas for each shape, in its order; `--betas` go before the last three.
CURRENT_BETAS = ("claude-code-20250219", "interleaved-thinking-2025-05-14",
                 "context-management-2025-06-27", "per-turn-control-2026-07-01",
                 "mid-conversation-tool-changes-2026-07-01")
CURRENT_TAIL = ("thinking-token-count-2026-05-13", "advanced-tool-use-2025-11-20",
                "effort-2025-11-24")
CLASSIC_BETAS = ("claude-code-20250219", "interleaved-thinking-2025-05-14",
                 "context-management-2025-06-27")
CLASSIC_TAIL = ("thinking-token-count-2026-05-13", "advanced-tool-use-2025-11-20")
_GENERATION = re.compile(r"^claude-(?:[a-z]+-)?(\d+)(?:[-.]|$)")


class Thinking:
    """The session's thinking choices: `--thinking` (adaptive, enabled, disabled),
    `--max-thinking-tokens` (or `set_max_thinking_tokens`), `--thinking-display`, and
    `--effort`. A plain class: this module is on the path of the first request."""

    __slots__ = ("budget", "display", "effort", "mode")

    def __init__(self, mode: str | None = None, budget: int | None = None,
                 display: str | None = None, effort: str | None = None) -> None:
        self.mode = mode
        self.budget = budget
        self.display = display
        self.effort = effort


def generation(model: str) -> int | None:
    """The Claude generation of a model id (`claude-sonnet-4-5-…` → 4,
    `claude-3-7-sonnet` → 3), or None for a model that is not Claude's."""
    if catalog.is_other_provider(model):
        return None
    found = _GENERATION.match(model.removeprefix("anthropic:"))
    return int(found.group(1)) if found else None


def request_fields(model: str, max_tokens: int, choices: Thinking,
                   user_betas: tuple[str, ...] = ()) -> tuple[JSON, tuple[str, ...]]:
    """(the body fields, the betas) for one request to `model`."""
    made = generation(model)
    if made is None:
        return {}, user_betas
    if made >= 5:
        display = choices.display or "omitted"
        fields: JSON = {"thinking": {"type": "adaptive", "display": display},
                        "context_management": CONTEXT_MANAGEMENT,
                        "output_config": {"effort": choices.effort or DEFAULT_EFFORT}}
        return fields, (*CURRENT_BETAS, *user_betas, *CURRENT_TAIL)
    if choices.mode == "disabled":
        return {"thinking": {"type": "disabled"}}, (*CLASSIC_BETAS, *user_betas, *CLASSIC_TAIL)
    budget = choices.budget if choices.budget else max_tokens - 1
    fields = {"thinking": {"type": "enabled", "budget_tokens": budget,
                           "display": choices.display or "omitted"},
              "context_management": CONTEXT_MANAGEMENT}
    return fields, (*CLASSIC_BETAS, *user_betas, *CLASSIC_TAIL)


def user_id(device_id: str, session_id: str) -> str:
    """`metadata.user_id`: a JSON string, as the reference sends it (no account: an API
    key session)."""
    return json.dumps({"device_id": device_id, "account_uuid": "", "session_id": session_id},
                      separators=(",", ":"))
