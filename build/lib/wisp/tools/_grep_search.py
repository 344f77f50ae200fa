"""The two Grep engines: ripgrep when installed, a pure-Python walk otherwise.

Both return the same `Hits`, so the tool formats results identically whichever ran.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wisp.globmatch import GlobMatcher
from wisp.tools._bash_exec import run_supervised
from wisp.tools._fs import BINARY_SNIFF_BYTES, PRUNED_DIRS, looks_binary, pruned
from wisp.tools._output import CappedText
from wisp.tools.processes import ProcessRegistry

Mode = Literal["files_with_matches", "content", "count"]

MAX_LINE_CHARS = 500
# Files bigger than this are skipped by the fallback rather than loaded whole.
MAX_FILE_BYTES = 20_000_000
# Cap on ripgrep output we are willing to hold; results are truncated past it.
MAX_RG_OUTPUT = 20_000_000
RG_TIMEOUT_S = 60.0

# A small subset of ripgrep's --type table, for the fallback.
TYPE_GLOBS: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java",),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "md": ("*.md", "*.markdown"),
    "markdown": ("*.md", "*.markdown"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "html": ("*.html", "*.htm"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "ruby": ("*.rb",),
    "php": ("*.php",),
    "kotlin": ("*.kt", "*.kts"),
    "swift": ("*.swift",),
    "sql": ("*.sql",),
    "xml": ("*.xml",),
    "txt": ("*.txt",),
}


@dataclass
class Query:
    pattern: str
    root: Path
    mode: Mode = "files_with_matches"
    glob: str | None = None
    file_type: str | None = None
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    multiline: bool = False
    # Files the search may open (normalised path → bool); None = all. Set when Read deny
    # rules exist, so a search over a parent folder skips the denied subtree.
    may_read: Callable[[str], bool] | None = None


@dataclass
class Hits:
    files: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    counts: list[tuple[str, int]] = field(default_factory=list)


class FileFilter:
    """rg-style `--glob`: whitespace-separated patterns, `!` negates; a pattern without '/'
    matches the file name, one with '/' the path relative to the search root."""

    def __init__(self, glob: str | None, file_type: str | None) -> None:
        self.include: list[tuple[GlobMatcher, bool]] = []
        self.exclude: list[tuple[GlobMatcher, bool]] = []
        for token in (glob or "").split():
            target = self.exclude if token.startswith("!") else self.include
            bare = token.lstrip("!")
            target.append((GlobMatcher(bare), "/" in bare))
        self.types = [GlobMatcher(g) for g in TYPE_GLOBS.get(file_type or "", ())]

    def accepts(self, rel: str, name: str) -> bool:
        def hit(matcher: GlobMatcher, by_path: bool) -> bool:
            return matcher.match(rel if by_path else name)

        if any(hit(m, p) for m, p in self.exclude):
            return False
        if self.include and not any(hit(m, p) for m, p in self.include):
            return False
        return not self.types or any(m.match(name) for m in self.types)


def _candidates(query: Query) -> Iterator[Path]:
    if query.root.is_file():
        found: Iterator[Path] = iter([query.root])
    else:
        found = _walk(query.root, "", FileFilter(query.glob, query.file_type), query.glob or "")
    may_read = query.may_read
    if may_read is None:
        yield from found
        return
    yield from (path for path in found if may_read(os.path.realpath(path)))


def _walk(directory: Path, rel_dir: str, keep: FileFilter, glob: str) -> Iterator[Path]:
    """Files under `directory`, each directory's entries in name order with files and
    subdirectories interleaved: the order `rg --sort=path` prints, so engines agree."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        rel = f"{rel_dir}{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            if pruned([entry.name], glob):
                yield from _walk(Path(entry.path), rel + "/", keep, glob)
        elif entry.is_file(follow_symlinks=False) and keep.accepts(rel, entry.name):
            yield Path(entry.path)


def _load_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    if looks_binary(raw[:BINARY_SNIFF_BYTES]):
        return None
    return raw.decode("utf-8", errors="replace")


def _matched_lines(regex: re.Pattern[str], text: str, lines: list[str], multi: bool) -> list[int]:
    if not multi:
        return [i for i, line in enumerate(lines) if regex.search(line)]
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
    hit: set[int] = set()
    for m in regex.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        hit.update(range(first, last + 1))
    return sorted(i for i in hit if i < len(lines))


def _format_line(label: str, number: int, line: str, sep: str, numbered: bool) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + " [... line truncated]"
    prefix = [label] if label else []
    if numbered:
        prefix.append(str(number))
    return sep.join([*prefix, line]) if prefix else line


def _render(label: str, lines: list[str], matched: list[int], query: Query) -> list[str]:
    """grep-style output: ':' after matching lines, '-' after context, '--' between groups."""
    out: list[str] = []
    matched_set = set(matched)
    last = -1
    for i in matched:
        lo = max(0, i - query.before, last + 1)
        hi = min(len(lines) - 1, i + query.after)
        if out and lo > last + 1 and (query.before or query.after):
            out.append("--")
        for j in range(lo, hi + 1):
            sep = ":" if j in matched_set else "-"
            out.append(_format_line(label, j + 1, lines[j], sep, query.line_numbers))
        last = max(last, hi)
    return out


def compile_pattern(query: Query) -> re.Pattern[str]:
    flags = re.MULTILINE
    if query.ignore_case:
        flags |= re.IGNORECASE
    if query.multiline:
        flags |= re.DOTALL
    return re.compile(query.pattern, flags)


def search_python(query: Query) -> Hits:
    """The fallback engine. Raises re.error for a bad pattern."""
    regex = compile_pattern(query)
    hits = Hits()
    single_file = query.root.is_file()
    for path in _candidates(query):
        text = _load_text(path)
        if text is None:
            continue
        lines = [line.rstrip("\r") for line in text.split("\n")]
        if text.endswith("\n"):
            lines.pop()
        if query.mode == "files_with_matches" and not query.multiline:
            if any(regex.search(line) for line in lines):
                hits.files.append(str(path))
            continue
        matched = _matched_lines(regex, text, lines, query.multiline)
        if not matched:
            continue
        hits.files.append(str(path))
        hits.counts.append((str(path), len(matched)))
        if query.mode == "content":
            label = "" if single_file else str(path)
            if hits.lines and (query.before or query.after):
                hits.lines.append("--")
            hits.lines.extend(_render(label, lines, matched, query))
    return hits


def ripgrep_argv(rg: str, query: Query) -> list[str]:
    argv = [rg, "--hidden", "--no-config", "--color=never"]
    # Same exclusions as the fallback walk, so both engines see the same files.
    for name in sorted(PRUNED_DIRS):
        if name not in (query.glob or ""):
            argv += ["--glob", f"!{name}"]
    if query.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif query.mode == "count":
        argv += ["--count", "--with-filename", "--sort=path"]
    else:
        argv += [
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
    out = CappedText(MAX_RG_OUTPUT, keep_tail=False)
    outcome = await run_supervised(
        ripgrep_argv(rg, query),
        cwd=cwd,
        env=None,
        timeout_s=RG_TIMEOUT_S,
        stdout=out,
        stderr=CappedText(4096, keep_tail=False),
        abort=abort,
        registry=registry,
    )
    if outcome.ending == "timeout":
        return f"ripgrep timed out after {RG_TIMEOUT_S:g}s; narrow the path or pattern."
    if outcome.ending == "interrupted":
        return "Grep was interrupted."
    text = out.head
    if out.total > len(text):
        # Past the cap: drop the line we cut through.
        text = text[: text.rfind("\n") + 1]
    if outcome.returncode == 2 and not text:
        return "Grep failed: " + outcome.stderr.head.strip()
    return _parse_rg(text, query)


def _parse_rg(text: str, query: Query) -> Hits:
    rows = [line for line in text.split("\n") if line]
    hits = Hits()
    if query.mode == "files_with_matches":
        hits.files = rows
    elif query.mode == "count":
        for row in rows:
            path, _, count = row.rpartition(":")
            if count.isdigit():
                hits.counts.append((path, int(count)))
                hits.files.append(path)
    else:
        hits.lines = rows
    return hits
