"""Recording for `cassette`: a model wrapper that passes each request on and appends the
exchange to the cassette when it ends, however it ends (complete, error, abandoned).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncGenerator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from wisp.errors import ModelAPIError
from wisp.jsontypes import JSON
from wisp.models.base import Model, ModelRequest, ModelStream
from wisp.models.body import encode_value
from wisp.models.cassette_file import (
    REDACTED,
    VERSION,
    append_line,
    error_record,
    iso_time,
    run_paths,
    secret_values,
    writable,
)
from wisp.models.stream_base import StreamBase

if TYPE_CHECKING:
    from typing import Self


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
        self._paths = encode_value(run_paths(env, cwd))
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
        parts = [b'{"v":', str(VERSION).encode(), b',"ts":', encode_value(iso_time(self._ts)),
                 b',"ms":', str(round((time.time() - self._ts) * 1000)).encode()]
        if self._model.spec is not None:
            parts += [b',"spec":', encode_value(self._model.spec)]
        parts += [b',"request":', self._body, b',"request_id":', encode_value(self.request_id),
                  b',"events":[', b",".join(self._seen), b'],"ended":', encode_value(ended)]
        if error is not None:
            parts += [b',"error":', encode_value(error_record(error, at))]
        parts += [b',"paths":', self._model._paths, b"}\n"]
        self._model._write(b"".join(parts))
