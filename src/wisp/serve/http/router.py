"""Routing: path patterns with `{param}` segments, matched to a request's
percent-decoded path segments."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from wisp.serve.http.messages import Handler, HttpError


@dataclass(slots=True)
class _Route:
    pattern: str
    segments: tuple[tuple[str, bool], ...]  # (literal or param name, is_param)
    methods: dict[str, Handler]

    def bind(self, segments: tuple[str, ...]) -> dict[str, str] | None:
        params: dict[str, str] = {}
        for (want, is_param), got in zip(self.segments, segments, strict=True):
            if is_param:
                if not got:
                    return None
                params[want] = got
            elif want != got:
                return None
        return params


def _compile(pattern: str) -> tuple[tuple[str, bool], ...]:
    if not pattern.startswith("/"):
        raise ValueError(f"a route must start with '/': {pattern!r}")
    out: list[tuple[str, bool]] = []
    for seg in pattern.split("/")[1:]:
        if seg.startswith("{") and seg.endswith("}"):
            name = seg[1:-1]
            if not name.isidentifier() or any(name == prev for prev, p in out if p):
                raise ValueError(f"bad parameter {seg!r} in route {pattern!r}")
            out.append((name, True))
        elif "{" in seg or "}" in seg:
            raise ValueError(f"a parameter must be a whole segment: {pattern!r}")
        else:
            out.append((seg, False))
    return tuple(out)


def path_segments(raw_path: str) -> tuple[str, ...]:
    """The percent-decoded segments after the leading '/', decoded one by one so an
    encoded '/' (%2F) stays inside its segment."""
    parts = raw_path.split("/")[1:]
    if "%" in raw_path:
        return tuple(unquote(part) if "%" in part else part for part in parts)
    return tuple(parts)


class Router:
    def __init__(self) -> None:
        self._static: dict[tuple[str, ...], dict[str, Handler]] = {}
        self._dynamic: list[_Route] = []
        self._streamed: set[Handler] = set()

    def add(self, method: str, pattern: str, handler: Handler, *,
            stream_body: bool = False) -> None:
        """`stream_body`: the server leaves the body unread and the handler reads it from
        `request.body_stream` (an upload that must not be held in memory whole)."""
        if stream_body:
            self._streamed.add(handler)
        segments = _compile(pattern)
        if not any(is_param for _, is_param in segments):
            self._static.setdefault(tuple(seg for seg, _ in segments), {})[method] = handler
            return
        for route in self._dynamic:
            if route.segments == segments:
                route.methods[method] = handler
                return
        self._dynamic.append(_Route(pattern, segments, {method: handler}))
        # Literal segments win over params, position by position (".../events/stream"
        # before ".../events/{event_id}").
        self._dynamic.sort(key=lambda r: tuple(is_param for _, is_param in r.segments))

    def streams_body(self, method: str, segments: tuple[str, ...]) -> bool:
        """Whether the route of this request reads its body as a stream."""
        if not self._streamed:
            return False
        try:
            handler, _ = self.match(method, segments)
        except HttpError:
            return False
        return handler in self._streamed

    def match(self, method: str, segments: tuple[str, ...]) -> tuple[Handler, dict[str, str]]:
        """The handler and params for a request; HttpError 404 or 405 when there is none."""
        allowed: set[str] = set()
        methods = self._static.get(segments)
        if methods is not None:
            if (handler := methods.get(method)) is not None:
                return handler, {}
            allowed.update(methods)
        for route in self._dynamic:
            if len(route.segments) != len(segments):
                continue
            params = route.bind(segments)
            if params is None:
                continue
            if (handler := route.methods.get(method)) is not None:
                return handler, params
            allowed.update(route.methods)
        path = "/" + "/".join(segments)
        if allowed:
            raise HttpError(
                405,
                "invalid_request_error",
                f"method {method} is not allowed for {path}",
                headers={"allow": ", ".join(sorted(allowed))},
            )
        raise HttpError(404, "not_found_error", f"no such resource: {method} {path}")
