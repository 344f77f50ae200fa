"""The one alias for a JSON object as wisp handles it: a dict with str keys whose
values are checked at the edges (`wisp.wire`, `wisp.serve.shapes`), not statically."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
