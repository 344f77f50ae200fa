"""Token and cost accounting, per model and per session, in the shapes clients read."""

from __future__ import annotations

from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.values import Record, field

TOKEN_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class ModelTally(Record):
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    cost_usd: float = 0.0

    def add(self, model: str, usage: JSON) -> float:
        delta = {k: int(usage.get(k) or 0) for k in TOKEN_KEYS}
        for key, value in delta.items():
            self.tokens[key] += value
        cost = catalog.cost_usd(model, delta)
        self.cost_usd += cost
        return cost

    def as_model_usage(self, model: str) -> JSON:
        return {
            "inputTokens": self.tokens["input_tokens"],
            "outputTokens": self.tokens["output_tokens"],
            "cacheReadInputTokens": self.tokens["cache_read_input_tokens"],
            "cacheCreationInputTokens": self.tokens["cache_creation_input_tokens"],
            "webSearchRequests": 0,
            "costUSD": self.cost_usd,
            "contextWindow": catalog.context_window(model),
            "maxOutputTokens": catalog.max_output_tokens(model),
        }


class UsageLedger(Record):
    """Usage of one span (a whole session, or one run between two results)."""

    by_model: dict[str, ModelTally] = field(default_factory=dict)

    def add(self, model: str, usage: JSON) -> float:
        return self.by_model.setdefault(model, ModelTally()).add(model, usage)

    @property
    def cost_usd(self) -> float:
        return sum(t.cost_usd for t in self.by_model.values())

    def totals(self) -> JSON:
        totals = dict.fromkeys(TOKEN_KEYS, 0)
        for tally in self.by_model.values():
            for key in TOKEN_KEYS:
                totals[key] += tally.tokens[key]
        return {
            **totals,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
        }

    def model_usage(self) -> JSON:
        return {name: t.as_model_usage(name) for name, t in self.by_model.items()}
