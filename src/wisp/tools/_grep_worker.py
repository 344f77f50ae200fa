"""Grep's Python engine in a child process, where no ripgrep is to be had.

Above: the Grep tool. Below: `run_supervised`, which gives the child its own process
group, a deadline and the session's abort. Python's `re` backtracks: `(a+)+$` against a
long line of `a`s runs for hours inside one C call that holds the GIL, which no signal
handler and no timeout can interrupt in the process that makes it. In a child, the
deadline and SIGTERM simply kill it.

The child is `python -I`: neither the working folder (a repository could hold a `wisp`
package of its own) nor PYTHON* variables decide what it imports. It gets the query as
JSON in argv and prints the hits as one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from wisp.processes import ProcessRegistry
from wisp.processes.output import CappedText
from wisp.tools._bash_exec import run_supervised
from wisp.tools._grep_search import (
    MAX_ENGINE_OUTPUT,
    SEARCH_TIMEOUT_S,
    Hits,
    Query,
    search_python,
)

# Content lines the child sends back, in characters; its JSON may be longer (escapes), so
# the pipe is read to a larger cap.
_CHILD_BUDGET = MAX_ENGINE_OUTPUT // 2
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from wisp.tools._grep_worker import main; main()")


async def search_in_child(query: Query, registry: ProcessRegistry,
                          abort: asyncio.Event | None) -> Hits | str:
    """Hits, or an error message for the model. Raises OSError if the child can't start."""
    package_root = str(Path(__file__).resolve().parents[2])
    argv = [sys.executable, "-I", "-c", _BOOT, package_root, json.dumps(query.to_json())]
    out = CappedText(MAX_ENGINE_OUTPUT, keep_tail=False)
    outcome = await run_supervised(
        argv, cwd=None, env=None, timeout_s=SEARCH_TIMEOUT_S, stdout=out,
        stderr=CappedText(4096, keep_tail=False), abort=abort, registry=registry)
    if outcome.ending == "timeout":
        return (f"Grep timed out after {SEARCH_TIMEOUT_S:g}s: the pattern may backtrack "
                "without end in Python's regex engine; narrow the path or simplify it.")
    if outcome.ending == "interrupted":
        return "Grep was interrupted."
    try:
        answer = json.loads(out.head)
    except ValueError:
        tail = outcome.stderr.head.strip().splitlines()[-1:] or ["no answer"]
        return f"Grep failed: {tail[0]}"
    if "error" in answer:
        return str(answer["error"])
    return _hits(answer)


def _hits(answer: dict[str, Any]) -> Hits:
    return Hits(files=[str(f) for f in answer["files"]],
                groups=[(str(p), [str(x) for x in lines]) for p, lines in answer["groups"]],
                counts=[(str(p), int(n)) for p, n in answer["counts"]])


def main() -> None:
    """The child: argv[2] is the query; stdout gets `{"files", "groups", "counts"}` or
    `{"error"}`."""
    query = Query.from_json(json.loads(sys.argv[2]))
    try:
        hits = search_python(query, _CHILD_BUDGET)
        answer: dict[str, Any] = {"files": hits.files, "groups": hits.groups,
                                  "counts": hits.counts}
    except re.error as exc:
        answer = {"error": f"Invalid regular expression {query.pattern!r}: {exc}"}
    except RecursionError:
        answer = {"error": f"Invalid regular expression {query.pattern!r}: nested too deeply"}
    # ASCII: a file name that is not UTF-8 holds lone surrogates, which only an escape
    # carries through a pipe.
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
