"""Matching for cassette replay: what `loose` mode ignores (ids, dates, times, the
platform line, the run's paths), the key a request is looked up by, and the first
difference from the closest recorded request, for the mismatch message.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from wisp.jsontypes import JSON

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


def match_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_ABSENT = object()
_SHOWN = 60


def count_differences(recorded: Any, now: Any, path: str, out: list[str]) -> int:
    """How many leaves differ; the first difference (path and both values) goes to `out`."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        keys = list(recorded) + [k for k in now if k not in recorded]
        return sum(count_differences(recorded.get(k, _ABSENT), now.get(k, _ABSENT),
                         f"{path}.{k}" if path else str(k), out) for k in keys)
    if isinstance(recorded, list) and isinstance(now, list):
        return sum(count_differences(recorded[i] if i < len(recorded) else _ABSENT,
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
