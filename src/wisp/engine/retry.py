"""Retry policy for model calls: exponential backoff that honours `retry-after`.

An endpoint never reached this session (`Unreachable`, not `reached_before`) gets a short
retry instead: a wrong URL, a missing network or a refused port does not mend in minutes,
and a first run must say so in seconds, not after ten silent backoffs.
"""

from __future__ import annotations

from collections.abc import Mapping

from wisp.errors import ModelAPIError, Unreachable
from wisp.values import Value

# A server asking for more than this is treated as asking for this much: a headless run
# should fail visibly rather than sleep for an hour.
MAX_RETRY_AFTER_S = 300.0


class RetryPolicy(Value):
    max_retries: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0
    connect_retries: int = 2  # at most; max_retries caps it too
    connect_budget_s: float = 10.0  # no connect retry starts past this since the call began

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

    def connect_delay_s(self, attempt: int) -> float:
        """Seconds before connect retry number `attempt`: 1 s, then 2 s (at the default
        base delay). No jitter: the endpoint is down for everyone or for no one."""
        return min(self.base_delay_s * 2.0 ** attempt, self.max_delay_s)

    def connect_retries_left(self, retries: int, elapsed_s: float) -> bool:
        """Whether an endpoint never reached gets another try after `retries` of them."""
        return (retries < min(self.connect_retries, self.max_retries)
                and elapsed_s + self.connect_delay_s(retries + 1) <= self.connect_budget_s)


def first_contact(error: ModelAPIError) -> bool:
    """A connection that failed to an endpoint this session never reached."""
    return isinstance(error, Unreachable) and not error.reached_before


def _non_negative_int(raw: str | None, default: int) -> int:
    try:
        return max(0, int(raw)) if raw is not None else default
    except ValueError:
        return default
