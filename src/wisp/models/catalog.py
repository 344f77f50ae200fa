"""Model aliases, context sizes and list prices.

Aliases resolve through env overrides first (`ANTHROPIC_DEFAULT_<ALIAS>_MODEL`, the names
Claude Code users already set), so a deployment can repoint `sonnet` without a release.
Prices are USD per million tokens; a model we don't know costs 0 rather than a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class Price:
    """USD per million tokens. Immutable by convention. (A plain class: a dataclass costs
    ~1 ms to define, and this module loads before the first frame.)"""

    __slots__ = ("cache_read", "cache_write", "input", "output")

    def __init__(self, input: float, output: float, cache_write: float,
                 cache_read: float) -> None:
        self.input = input
        self.output = output
        self.cache_write = cache_write
        self.cache_read = cache_read

    def _key(self) -> tuple[float, float, float, float]:
        return (self.input, self.output, self.cache_write, self.cache_read)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Price) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Price(input={self.input!r}, output={self.output!r}, "
                f"cache_write={self.cache_write!r}, cache_read={self.cache_read!r})")


def _price(inp: float, out: float) -> Price:
    # Anthropic's published ratios: 5-minute cache writes cost 1.25x input, reads 0.1x.
    return Price(inp, out, inp * 1.25, inp * 0.1)


DEFAULT_ALIASES: dict[str, str] = {
    "opus": "claude-opus-5-5",
    "fable": "claude-fable-5-2",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}
DEFAULT_ALIAS = "opus"

# Longest prefix wins, so dated ids (claude-sonnet-4-5-20250929) find their family.
PRICES: dict[str, Price] = {
    "claude-opus-5-5": _price(4, 20),
    "claude-fable-5-2": _price(8, 40),
    "claude-sonnet-5-5": _price(2, 10),
    "claude-haiku-5-5": _price(0.10, 0.50),
    "claude-opus-4-5": _price(5, 25),
    "claude-opus-4-1": _price(15, 75),
    "claude-opus-4": _price(15, 75),
    "claude-sonnet-4": _price(3, 15),
    "claude-haiku-4-5": _price(1, 5),
    "claude-3-7-sonnet": _price(3, 15),
    "claude-3-5-sonnet": _price(3, 15),
    "claude-3-5-haiku": _price(0.8, 4),
}

CONTEXT_WINDOW_DEFAULT = 200_000
CONTEXT_WINDOWS: dict[str, int] = {"claude-opus-5-5": 1_000_000, "claude-fable-5-2": 1_000_000}
MAX_OUTPUT_DEFAULT = 32_000
MAX_OUTPUT: dict[str, int] = {
    "claude-opus-5-5": 128_000,
    "claude-fable-5-2": 128_000,
    "claude-sonnet-5-5": 128_000,  # the reference's max_tokens for each (measured)
    "claude-haiku-5-5": 128_000,
}


def resolve_model(name: str | None, env: Mapping[str, str]) -> str:
    """Map an alias (or None, meaning the default) to a concrete model id."""
    if not name or name == "default":
        name = env.get("ANTHROPIC_MODEL") or DEFAULT_ALIAS
    if name.startswith("anthropic:"):  # the explicit spelling of the default provider
        return "anthropic:" + resolve_model(name[len("anthropic:"):] or None, env)
    alias = name.lower()
    if alias in DEFAULT_ALIASES:
        return env.get(f"ANTHROPIC_DEFAULT_{alias.upper()}_MODEL") or DEFAULT_ALIASES[alias]
    return name


# (table, model) → (the table, kept so its id stays its own; the longest matching prefix's
# entry). Looked up several times a turn. Tables are never changed in place.
_FOUND: dict[tuple[int, str], tuple[object, Any]] = {}


def _lookup(table: Mapping[str, T], model: str) -> T | None:
    key = (id(table), model)
    hit = _FOUND.get(key)
    if hit is not None and hit[0] is table:
        found: T | None = hit[1]
        return found
    best = max((k for k in table if model.startswith(k)), key=len, default=None)
    value = None if best is None else table[best]
    if len(_FOUND) < 4096:  # model names come from users: keep the memo bounded
        _FOUND[key] = (table, value)
    return value


# Models behind other providers, by spec ("openai:gpt-4.1", "local:qwen3-coder"): what
# settings' `providers.<name>.models` say, registered when a session builds its model
# (`wisp.models.route`), and a few OpenAI list prices. A spec found in neither costs 0.
class ModelFacts:
    __slots__ = ("context_window", "max_output", "price")

    def __init__(self, price: Price | None, context_window: int | None,
                 max_output: int | None) -> None:
        self.price = price
        self.context_window = context_window
        self.max_output = max_output


OTHER_MODELS: dict[str, ModelFacts] = {
    "openai:gpt-4.1": ModelFacts(Price(2, 8, 2, 0.5), 1_047_576, 32_768),
    "openai:gpt-4.1-mini": ModelFacts(Price(0.4, 1.6, 0.4, 0.1), 1_047_576, 32_768),
    "openai:gpt-4o": ModelFacts(Price(2.5, 10, 2.5, 1.25), 128_000, 16_384),
    "openai:gpt-4o-mini": ModelFacts(Price(0.15, 0.6, 0.15, 0.075), 128_000, 16_384),
    "openai:o3": ModelFacts(Price(2, 8, 2, 0.5), 200_000, 100_000),
    "openai:o4-mini": ModelFacts(Price(1.1, 4.4, 1.1, 0.275), 200_000, 100_000),
}
# A server we know nothing about: a window most local models have, and an output cap
# that fits inside it (sending max_tokens beyond a small server's context is a 400).
OTHER_CONTEXT_DEFAULT = 128_000
OTHER_MAX_OUTPUT_DEFAULT = 8_192


def register_model(spec: str, facts: ModelFacts) -> None:
    OTHER_MODELS[spec] = facts
    _FOUND.clear()


def _bare(model: str) -> str:
    return model[len("anthropic:"):] if model.startswith("anthropic:") else model


def is_other_provider(model: str) -> bool:
    """A spec whose provider is not Anthropic's Messages API (see wisp.models.route)."""
    head, sep, _ = model.partition(":")
    return bool(sep) and head != "anthropic" and (head == "openai" or head in PROVIDER_NAMES)


PROVIDER_NAMES: set[str] = set()  # named providers from settings, registered by route


def price_for(model: str) -> Price | None:
    if is_other_provider(model):
        facts = OTHER_MODELS.get(model)
        return facts.price if facts else None
    return _lookup(PRICES, _bare(model))


def context_window(model: str) -> int:
    if is_other_provider(model):
        facts = OTHER_MODELS.get(model)
        return (facts.context_window if facts else None) or OTHER_CONTEXT_DEFAULT
    return _lookup(CONTEXT_WINDOWS, _bare(model)) or CONTEXT_WINDOW_DEFAULT


def max_output_tokens(model: str) -> int:
    if is_other_provider(model):
        facts = OTHER_MODELS.get(model)
        return (facts.max_output if facts else None) or OTHER_MAX_OUTPUT_DEFAULT
    return _lookup(MAX_OUTPUT, _bare(model)) or MAX_OUTPUT_DEFAULT


def cost_usd(model: str, usage: Mapping[str, int]) -> float:
    price = price_for(model)
    if price is None:
        return 0.0
    total = (
        usage.get("input_tokens", 0) * price.input
        + usage.get("output_tokens", 0) * price.output
        + usage.get("cache_creation_input_tokens", 0) * price.cache_write
        + usage.get("cache_read_input_tokens", 0) * price.cache_read
    )
    return total / 1_000_000
