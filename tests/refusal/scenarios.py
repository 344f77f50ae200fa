"""A model that refuses (`stop_reason: "refusal"`) once, then answers; and one that
refuses twice: the frames and requests wisp and the reference produce, observed alike.
tests/record_reference.py records the reference's as
tests/fixtures/reference/refusal/refusal.json."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tests.refrun import Place, kind, print_run
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
REFUSED = "I won't help with that."


def _frame(frame: JSON) -> JSON:
    seen: JSON = {"kind": kind(frame)}
    if frame.get("type") in ("user", "assistant"):
        seen["text"] = str(frame["message"]["content"][0].get("text"))[:80]
        seen.update({k: frame[k] for k in ("isSynthetic", "refusal_retry") if k in frame})
        seen["names_refused"] = "refused_message_id" in frame and frame["type"] == "user"
    elif frame.get("type") == "system" and frame["subtype"] != "init":
        seen.update({k: frame.get(k) for k in ("content", "level", "original_model",
                                                "api_refusal_category") if k in frame})
    elif frame.get("type") == "result":
        seen.update({k: frame.get(k) for k in ("subtype", "is_error", "stop_reason",
                                                "terminal_reason")})
        seen["result"] = str(frame.get("result"))[:60]
    return seen


def _last_user(body: JSON) -> str:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return texts[-1][:60]


def refusal_scenario(which: str, tmp: Path) -> JSON:
    observations: JSON = {}
    for name, refusals in (("once", 1), ("twice", 2)):
        with ScriptedServer() as server, tempfile.TemporaryDirectory(dir=tmp) as folder:
            server.script(*[reply.text(REFUSED, stop_reason="refusal")] * refusals,
                          reply.text("the answer"))
            code, _, frames = print_run(which, Place(Path(folder), server), "-p", "do it",
                                        "--output-format", "stream-json", "--verbose")
            observations[name] = {
                "exit": code, "frames": [_frame(f) for f in frames
                                         if kind(f) != "system/init"],
                "requests": [_last_user(r.body) for r in server.requests if r.body],
            }
    return json.loads(json.dumps(observations))
