"""Retry policy for model calls: exponential backoff that honours `retry-after`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wisp.errors import ModelAPIError

# A server asking for more than this is treated as asking for this much: a headless run
# should fail visibly rather than sleep for an hour.
MAX_RETRY_AFTER_S = 300.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RetryPolicy:
        raw = env.get("WISP_MAX_RETRIES") or env.get("CLAUDE_CODE_MAX_RETRIES")
        base_ms = env.get("WISP_RETRY_BASE_DELAY_MS")
        return cls(
            max_retries=_non_negative_int(raw, cls.max_retries),
            base_delay_s=_non_negative_int(base_ms, 500) / 1000,
        )

    def delay_s(self, attempt: int, error: ModelAPIError) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if error.retry_after is not None:
            return min(max(float(error.retry_after), 0.0), MAX_RETRY_AFTER_S)
        backoff = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        # Imported here: only a retry needs it, and every start-up would pay for it.
        import random

        # Up to 25% jitter so parallel clients don't retry in lockstep.
        return backoff * (1 - random.random() * 0.25)


def _non_negative_int(raw: str | None, default: int) -> int:
    try:
        return max(0, int(raw)) if raw is not None else default
    except ValueError:
        return default
