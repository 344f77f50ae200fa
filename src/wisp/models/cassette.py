"""Record and replay of model exchanges: `WISP_RECORD=<file>`, `WISP_REPLAY=<file>`.

Above: `wisp.runtime.build` wraps the session's model with `wrap_for_env`; tests use
`RecordingModel` / `ReplayModel` (also in `wisp.testing`). Below: any `Model` — this works
on `ModelRequest`s and the Anthropic-shaped event dicts every provider yields, so it knows
no provider.

A cassette is JSONL, one line per exchange, appended with one `write` when the exchange
ends (O_APPEND under an exclusive `flock`: concurrent exchanges, subagents' or other
processes', never interleave, and a killed process leaves whole lines; should one die
inside its write, the next append starts a fresh line and the reader skips the torn one):

    {"v":1,"ts":"2025-06-01T12:00:00.123Z","ms":812,"spec":"anthropic:claude-…",
     "request":{…ModelRequest.body()…},"request_id":"req_…","events":[{…},…],
     "ended":"complete","paths":{"cwd":"/home/me/proj","home":"/home/me","tmp":"/tmp"}}

`ended` is `complete` (message_stop seen), `error` (with `"error": {"class", "status",
"type", "message", "retry_after", "at": "open"|"stream"}`, after the events that arrived)
or `abandoned` (the consumer closed the stream early: the events so far). `paths` is
what loose matching treats as volatile. Values of
secret-looking environment variables (…_KEY, …_TOKEN, …SECRET…) are replaced by
`[REDACTED]` wherever they occur in a line; the replay side redacts its requests the same
way before matching.

Replay serves each exchange once, to the first unconsumed one whose request matches: in
`strict` mode the bodies must be equal but for `metadata`; `loose` also ignores ids
(renumbered in first-seen order, so pairings still count), dates, times, the `Platform:`
line of the system prompt, and the run's paths (cwd, home, temp dir). An abandoned
exchange replays its events, then waits until the consumer closes it.

Importing this module costs under a millisecond (no dataclasses; regexes compiled on first
use; asyncio and tempfile imported when needed), and `build.py` imports it only when one of
the variables is set, so a run without them pays nothing.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError, UsageError
from wisp.jsontypes import JSON
from wisp.models.base import Model, ModelRequest, ModelStream
from wisp.models.body import encode_value
from wisp.models.stream_base import StreamBase

if TYPE_CHECKING:
    import asyncio
    from typing import Self

__all__ = [
    "RecordingModel",
    "ReplayMismatch",
    "ReplayModel",
    "read_cassette",
    "wrap_for_env",
]

VERSION = 1
# Body fields that differ run to run and say nothing about the conversation.
TRANSPORT_FIELDS = frozenset({"metadata"})
REDACTED = "[REDACTED]"
_ERROR_CLASSES: dict[str, type[ModelAPIError]] = {
    "ModelAPIError": ModelAPIError,
    "RetryableAPIError": RetryableAPIError,
    "StreamCutError": StreamCutError,
}
_SECRET_PARTS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                           "CREDENTIAL", "CREDENTIALS", "AUTH"})
_MIN_SECRET = 8  # shorter values would redact ordinary words


def wrap_for_env(make_model: Callable[[], Model], env: Mapping[str, str], *,
                 spec: str | None = None) -> Model:
    """The session's model as `WISP_REPLAY` / `WISP_RECORD` / `WISP_REPLAY_MATCH` ask:
    a `ReplayModel` of the file (`make_model` never called), a `RecordingModel` around
    `make_model()`, or `make_model()` itself. With both set, the replay is recorded too.
    A cassette that cannot be read, or written, is a `UsageError`."""
    replay, record = env.get("WISP_REPLAY"), env.get("WISP_RECORD")
    if record:
        if replay and os.path.abspath(record) == os.path.abspath(replay):
            raise UsageError("WISP_RECORD and WISP_REPLAY name the same file")
        writable(record)  # before a provider is made
    model: Model
    if replay:
        match = env.get("WISP_REPLAY_MATCH") or "strict"
        if match not in ("strict", "loose"):
            raise UsageError(f"WISP_REPLAY_MATCH must be strict or loose (got {match!r})")
        model = ReplayModel.from_file(replay, match=match, env=env)
    else:
        model = make_model()
    if record:
        model = RecordingModel(model, record, spec=spec, env=env)
    return model


# Recording -----------------------------------------------------------------------------


class RecordingModel:
    """Passes each request to `inner` and appends the exchange to `path` (see the module
    doc). `env` (default: the process environment) names the secrets never written."""

    def __init__(self, inner: Model, path: str | os.PathLike[str], *, spec: str | None = None,
                 env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        env = os.environ if env is None else env
        self.inner = inner
        self.path = os.path.abspath(path)
        self.spec = spec
        self._secrets = secret_values(env)
        self._paths = _encode(run_paths(env, cwd))
        self.write_error: OSError | None = None  # the first failed append, if any
        writable(self.path)  # an unwritable cassette fails the launch, not the first turn

    def stream(self, request: ModelRequest) -> RecordingStream:
        return RecordingStream(self, request, self.inner.stream(request))

    async def aclose(self) -> None:
        """Closes the inner model's idle connections, if it has any."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def _write(self, line: bytes) -> None:
        for secret in self._secrets:
            line = line.replace(secret, REDACTED.encode())
        try:
            append_line(self.path, line)
        except OSError as exc:
            if self.write_error is None:
                self.write_error = exc
                sys.stderr.write(f"wisp: WISP_RECORD: cannot append to {self.path}: {exc}\n")


class RecordingStream(StreamBase):
    """One recorded exchange: the inner stream's events pass through unchanged."""

    def __init__(self, model: RecordingModel, request: ModelRequest, inner: ModelStream) -> None:
        super().__init__()
        self._model = model
        self._inner = inner
        self._opened: ModelStream | None = None
        self._body = encode_value(request.body())  # now: the history may grow later
        self._ts = time.time()
        self._seen: list[bytes] = []
        self._written = False

    async def __aenter__(self) -> Self:
        try:
            self._opened = await self._inner.__aenter__()
        except ModelAPIError as error:
            self._finish("error", error, "open")
            raise
        except BaseException:
            self._finish("abandoned")
            raise
        self.request_id = self._opened.request_id
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._finish("abandoned")  # unless already written
        await self._close_readers()
        await self._inner.__aexit__(exc_type, exc, tb)

    async def aclose(self) -> None:
        """As leaving the `async with`: the exchange is written and the inner stream closed."""
        await self.__aexit__(None, None, None)

    async def _events(self) -> AsyncGenerator[JSON, None]:
        source = self._opened if self._opened is not None else self._inner
        try:
            async for event in source:
                self._seen.append(encode_value(event))
                if event.get("type") == "message_stop":
                    self._finish("complete")  # the consumer may stop right there
                yield event
        except ModelAPIError as error:
            self._finish("error", error, "stream")
            raise

    def _finish(self, ended: str, error: ModelAPIError | None = None, at: str = "") -> None:
        if self._written:
            return
        self._written = True
        source = self._opened if self._opened is not None else self._inner
        self.request_id = self.request_id or source.request_id
        if ended == "abandoned" and b'"type":"message_stop"' in (self._seen or [b""])[-1]:
            ended = "complete"
        parts = [b'{"v":', str(VERSION).encode(), b',"ts":', _encode(_iso(self._ts)),
                 b',"ms":', str(round((time.time() - self._ts) * 1000)).encode()]
        if self._model.spec is not None:
            parts += [b',"spec":', _encode(self._model.spec)]
        parts += [b',"request":', self._body, b',"request_id":', _encode(self.request_id),
                  b',"events":[', b",".join(self._seen), b'],"ended":', _encode(ended)]
        if error is not None:
            parts += [b',"error":', _encode(error_record(error, at))]
        parts += [b',"paths":', self._model._paths, b"}\n"]
        self._model._write(b"".join(parts))


def error_record(error: ModelAPIError, at: str) -> JSON:
    """What re-raises an equivalent error (`replay_error`)."""
    cls = next(name for name, known in reversed(_ERROR_CLASSES.items())
               if isinstance(error, known))
    return {"class": cls, "status": error.status, "type": error.error_type,
            "message": error.message, "retry_after": error.retry_after, "at": at}


def replay_error(record: JSON) -> ModelAPIError:
    cls = _ERROR_CLASSES.get(str(record.get("class")), ModelAPIError)
    status, retry_after = record.get("status"), record.get("retry_after")
    return cls(str(record.get("message") or "recorded model API error"),
               status=status if isinstance(status, int) else None,
               error_type=record.get("type") if isinstance(record.get("type"), str) else None,
               retry_after=float(retry_after) if isinstance(retry_after, int | float) else None)


_APPEND_LOCK = threading.Lock()


def append_line(path: str, line: bytes) -> None:
    """Appends `line` with one `write` (O_APPEND: lines of concurrent writers, threads or
    processes, do not interleave). If a killed writer left a partial last line, the new
    one starts on a line of its own: the check and the write hold an exclusive `flock`,
    so a line another writer is still writing is never taken for a partial one."""
    import fcntl

    with _APPEND_LOCK:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by the close
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def writable(path: str | os.PathLike[str]) -> None:
    """Creates the cassette if need be (mode 600); UsageError if it cannot be appended to."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600))
    except OSError as exc:
        raise UsageError(f"WISP_RECORD: cannot write {path}: {exc.strerror}") from exc


def secret_values(env: Mapping[str, str]) -> list[bytes]:
    """The JSON-escaped values of secret-looking variables (names with a KEY, TOKEN,
    SECRET, PASSWORD, CREDENTIAL or AUTH part; header values of …_HEADERS), longest first."""
    found: set[str] = set()
    for name, value in env.items():
        parts = set(re.split(r"[^A-Z0-9]+", name.upper()))
        if parts & _SECRET_PARTS:
            found.add(value.strip())
        elif name.upper().endswith("_HEADERS"):
            found.update(line.partition(":")[2].strip() for line in value.splitlines())
    escaped = {encode_value(v)[1:-1] for v in found if len(v) >= _MIN_SECRET}
    return sorted(escaped, key=len, reverse=True)


def run_paths(env: Mapping[str, str], cwd: str | None = None) -> dict[str, str]:
    """The run's cwd, home and temp dir: what loose matching treats as volatile."""
    import tempfile

    paths = {"cwd": cwd or os.getcwd(), "home": env.get("HOME") or os.path.expanduser("~"),
             "tmp": env.get("TMPDIR") or tempfile.gettempdir()}
    return {k: v.rstrip("/") or v for k, v in paths.items() if v}


def _encode(value: object) -> bytes:
    return encode_value(value)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


# Replay --------------------------------------------------------------------------------


class ReplayMismatch(ModelAPIError):
    """No recorded exchange matches a request. A 400: the engine does not retry it."""


def read_cassette(path: str | os.PathLike[str]) -> list[JSON]:
    """The exchanges of a cassette, in file order. A line that is not a JSON object (what
    a writer killed mid-write leaves) is skipped."""
    exchanges = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            try:
                exchange = json.loads(line)
            except ValueError:
                continue
            if isinstance(exchange, dict) and isinstance(exchange.get("request"), dict):
                exchanges.append(exchange)
    return exchanges


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
        key = _key(now)
        with self._lock:
            if self._keys is None:
                self._keys = {}
                for index, exchange in enumerate(self.exchanges):
                    recorded = self._recorded(exchange)
                    self._keys.setdefault(_key(recorded), deque()).append(index)
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
            count = _diff(self._recorded(self.exchanges[index]), now, "", diffs)
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


# Matching ------------------------------------------------------------------------------

_ID_PATTERN = (
    r"\b(?:toolu|srvtoolu|msg|call|req|chatcmpl|fc|resp|run|sess|session)_"
    r"(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{6,}\b"
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_DATETIME_PATTERN = (
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?[AaPp][Mm])?\b")
_PROMPT_CWD = r"^- Working directory: (.+)$"
_PATH_END = r"(?![A-Za-z0-9_.~-])"


class Loose:
    """Normalises the strings of one request body for `loose` matching. Ids are numbered
    in first-seen order across the whole body, so a tool_use and its tool_result still
    pair up; the run's paths become <cwd>, <home>, <tmp> (a file under the temp dir,
    whose name is random, becomes <tmpfile>)."""

    def __init__(self, body: JSON, paths: Mapping[str, Any], *,
                 prefer_prompt_cwd: bool = True) -> None:
        roots = {k: str(v) for k, v in paths.items() if isinstance(v, str) and len(v) > 1}
        found = re.search(_PROMPT_CWD, _system_text(body), re.M)
        if found and (prefer_prompt_cwd or "cwd" not in roots):
            roots["cwd"] = found.group(1).strip().rstrip("/")
        pairs: dict[str, str] = {}
        for name, root in roots.items():
            for variant in (root, os.path.realpath(root)):
                if len(variant) > 1:
                    pairs.setdefault(variant, f"<{name}>")
        ordered = sorted(pairs, key=len, reverse=True)  # the cwd before the tmp dir it is in
        self._roots = re.compile("|".join(re.escape(p) + _PATH_END for p in ordered)) \
            if ordered else None
        self._tokens = pairs
        self._ids: dict[str, str] = {}

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def text(self, text: str) -> str:
        if self._roots is not None:
            text = self._roots.sub(lambda m: self._tokens[m.group(0)], text)
            text = re.sub(r"<tmp>/[^\s'\"`]*", "<tmpfile>", text)
        text = re.sub(_ID_PATTERN, self._id, text)  # (re caches the compiled patterns)
        text = re.sub(_DATETIME_PATTERN,
                      lambda m: "<date>" if "-" in m.group(0) else "<time>", text)
        return re.sub(r"^(- Platform:).*$", r"\1 <platform>", text, flags=re.M)

    def _id(self, match: re.Match[str]) -> str:
        found = self._ids.get(match.group(0))
        if found is None:
            found = self._ids[match.group(0)] = f"<id{len(self._ids) + 1}>"
        return found


def _system_text(body: JSON) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_ABSENT = object()
_SHOWN = 60


def _diff(recorded: Any, now: Any, path: str, out: list[str]) -> int:
    """How many leaves differ; the first difference (path and both values) goes to `out`."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        keys = list(recorded) + [k for k in now if k not in recorded]
        return sum(_diff(recorded.get(k, _ABSENT), now.get(k, _ABSENT),
                         f"{path}.{k}" if path else str(k), out) for k in keys)
    if isinstance(recorded, list) and isinstance(now, list):
        return sum(_diff(recorded[i] if i < len(recorded) else _ABSENT,
                         now[i] if i < len(now) else _ABSENT, f"{path}[{i}]", out)
                   for i in range(max(len(recorded), len(now))))
    if recorded == now and type(recorded) is type(now):
        return 0
    if not out:
        out.append(f"{path or '(body)'}: recorded {_show(recorded, now)} "
                   f"vs now {_show(now, recorded)}")
    return 1


def _show(value: Any, other: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    if not isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
    start = 0
    if isinstance(other, str):  # a window around the first differing character
        start = next((i for i, (a, b) in enumerate(zip(value, other, strict=False))
                      if a != b), min(len(value), len(other)))
        start = max(0, start - _SHOWN // 3)
    shown = value[start:start + _SHOWN]
    return repr(("…" if start else "") + shown + ("…" if start + _SHOWN < len(value) else ""))
