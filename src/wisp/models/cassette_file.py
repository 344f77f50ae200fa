"""The cassette file for `cassette` (its format is in that module's doc): appending an
exchange's line safely, reading the exchanges back, the secrets redacted on both sides,
the run's paths, and errors as recorded and re-raised.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Mapping

from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError, UsageError
from wisp.jsontypes import JSON
from wisp.models.body import encode_value

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


def iso_time(ts: float) -> str:
    """`ts` as the cassette's `ts` field: UTC, milliseconds, `Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


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
