"""Replay for `cassette`: a model that serves recorded exchanges, each once, to the first
request that matches (`cassette_match` says what matching ignores in loose mode), and
names the closest difference when none does.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from wisp.errors import ModelAPIError, UsageError
from wisp.jsontypes import JSON
from wisp.models.base import ModelRequest
from wisp.models.body import encode_value
from wisp.models.cassette_file import (
    REDACTED,
    TRANSPORT_FIELDS,
    read_cassette,
    replay_error,
    run_paths,
    secret_values,
)
from wisp.models.cassette_match import Loose, count_differences, match_key
from wisp.models.stream_base import StreamBase

if TYPE_CHECKING:
    import asyncio


class ReplayMismatch(ModelAPIError):
    """No recorded exchange matches a request. A 400: the engine does not retry it."""


class ReplayModel:
    """Serves recorded exchanges, no network: each once, to the first unconsumed exchange
    whose request matches (`match`: `strict` or `loose`, see the module doc). A request
    that matches none raises `ReplayMismatch` naming its first difference from the closest
    remaining exchange. `env` (default: the process environment) names the secrets
    redacted before matching and the home and temp dir; `cwd` the run's directory (by
    default read from the system prompt's `Working directory:` line)."""

    def __init__(self, exchanges: Iterable[JSON], match: str = "strict", *,
                 env: Mapping[str, str] | None = None, cwd: str | None = None,
                 source: str = "cassette") -> None:
        if match not in ("strict", "loose"):
            raise ValueError(f"match must be 'strict' or 'loose', not {match!r}")
        env = os.environ if env is None else env
        self.match = match
        self.source = source
        self.exchanges: list[JSON] = list(exchanges)
        self.consumed: list[bool] = [False] * len(self.exchanges)
        self._secrets = secret_values(env)
        self._paths = run_paths(env, cwd)
        self._explicit_cwd = cwd is not None
        self._lock = threading.Lock()
        self._keys: dict[str, deque[int]] | None = None  # made on the first request

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], match: str = "strict", *,
                  env: Mapping[str, str] | None = None, cwd: str | None = None) -> ReplayModel:
        try:
            exchanges = read_cassette(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"WISP_REPLAY: cannot read {path}: {exc}") from exc
        return cls(exchanges, match, env=env, cwd=cwd, source=str(path))

    @property
    def remaining(self) -> int:
        """Exchanges not served yet (a test can assert the cassette was used up)."""
        return self.consumed.count(False)

    def stream(self, request: ModelRequest) -> ReplayStream:
        return ReplayStream(self, request)

    async def aclose(self) -> None:
        """Nothing to close (there are no connections); for symmetry with providers."""

    def take(self, request: ModelRequest) -> JSON:
        """Consumes and returns the exchange that answers `request`, or raises."""
        body = json.loads(self._redact(encode_value(request.body())))
        now = self._comparable(body, self._paths, explicit=self._explicit_cwd)
        key = match_key(now)
        with self._lock:
            if self._keys is None:
                self._keys = {}
                for index, exchange in enumerate(self.exchanges):
                    recorded = self._recorded(exchange)
                    self._keys.setdefault(match_key(recorded), deque()).append(index)
            queue = self._keys.get(key)
            if queue:
                index = queue.popleft()
                self.consumed[index] = True
                return self.exchanges[index]
            remaining = [i for i, used in enumerate(self.consumed) if not used]
        raise ReplayMismatch(self._mismatch(now, remaining), status=400,
                             error_type="invalid_request_error")

    def _redact(self, raw: bytes) -> bytes:
        for secret in self._secrets:
            raw = raw.replace(secret, REDACTED.encode())
        return raw

    def _recorded(self, exchange: JSON) -> Any:
        paths = exchange.get("paths")
        return self._comparable(exchange["request"], paths if isinstance(paths, dict) else {})

    def _comparable(self, body: JSON, paths: Mapping[str, Any], explicit: bool = False) -> Any:
        kept = {k: v for k, v in body.items() if k not in TRANSPORT_FIELDS}
        if self.match == "strict":
            return kept
        return Loose(body, paths, prefer_prompt_cwd=not explicit).value(kept)

    def _mismatch(self, now: Any, remaining: list[int]) -> str:
        head = "WISP_REPLAY: no recorded exchange matches this request"
        if not remaining:
            return (f"{head}; all {len(self.exchanges)} recorded exchanges of {self.source} "
                    "were already used")
        best: tuple[int, str] | None = None
        for index in remaining:
            diffs: list[str] = []
            count = count_differences(self._recorded(self.exchanges[index]), now, "", diffs)
            if best is None or count < best[0]:
                best = (count, diffs[0] if diffs else "(nothing)")
        assert best is not None
        mode = "" if self.match == "strict" else " (loose)"
        return f"{head}{mode}; closest differs at {best[1]}"


class ReplayStream(StreamBase):
    """One replayed response: the recorded events, at their recorded boundaries."""

    def __init__(self, model: ReplayModel, request: ModelRequest) -> None:
        super().__init__()
        self._model = model
        self._request = request
        self._exchange: JSON | None = None
        import asyncio  # (the engine has it loaded by now; start-up need not)

        self._closed: asyncio.Event = asyncio.Event()

    async def aclose(self) -> None:
        self._closed.set()
        await self._close_readers()

    async def _open(self) -> JSON:
        return self._take()

    def _take(self) -> JSON:
        if self._exchange is not None:
            return self._exchange
        exchange = self._exchange = self._model.take(self._request)
        rid = exchange.get("request_id")
        self.request_id = rid if isinstance(rid, str) else None
        error = exchange.get("error")
        if isinstance(error, dict) and error.get("at", "open") == "open":
            raise replay_error(error)
        return exchange

    async def _events(self) -> AsyncGenerator[JSON, None]:
        import asyncio

        if self._closed.is_set():
            return
        exchange = self._take()
        for event in exchange.get("events") or []:
            await asyncio.sleep(0)  # a real stream yields to the loop between events
            if self._closed.is_set():
                return
            yield event
            if isinstance(event, dict) and event.get("type") == "message_stop":
                return
        error = exchange.get("error")
        if isinstance(error, dict):
            raise replay_error(error)
        if exchange.get("ended") == "abandoned":
            await self._closed.wait()  # the recorded consumer stopped here: so will this one
